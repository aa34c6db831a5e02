"""Settings for the whole suite.

Every server the tests start (in-process or as a subprocess, which inherits the environment)
validates each outgoing message against the protocol schema; production servers skip that.
Property tests are deterministic: the same examples on every run and machine, no wall-clock
deadlines (a shared 2-core machine is slow at times), and no "explain" phase (it parses source
code with `ast`, which crashed once on CPython 3.11.7 with a recursion-depth mismatch).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

os.environ["SOLITAIRE_VALIDATE_REPLIES"] = "1"

settings.register_profile(
    "project",
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("project")
