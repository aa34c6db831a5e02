"""Settings for the whole suite.

Every server the tests start (in-process or as a subprocess, which inherits the environment)
validates each outgoing message against the protocol schema; production servers skip that.
Property tests are deterministic: the same examples on every run and machine, no wall-clock
deadlines (a shared 2-core machine is slow at times), and no "explain" phase (it parses source
code with `ast`, which crashed once on CPython 3.11.7 with a recursion-depth mismatch).
"""

from __future__ import annotations

import importlib
import os
import warnings

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

# Hypothesis imports its regex module on first use; pytest then rewrites it with `ast.parse`,
# which on CPython 3.11.7 failed twice with "AST constructor recursion depth mismatch" when that
# happened deep inside a running test. Importing it here, at a shallow stack, avoids that.
with warnings.catch_warnings():  # it reads its Unicode tables once, which it warns about
    warnings.simplefilter("ignore")
    importlib.import_module("hypothesis.strategies._internal.regex")
