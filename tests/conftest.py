"""Settings for the whole suite.

Every server the tests start (in-process or as a subprocess, which inherits the environment)
validates each outgoing message against the protocol schema; production servers skip that.
"""

from __future__ import annotations

import os

os.environ["SOLITAIRE_VALIDATE_REPLIES"] = "1"
