"""`HYPOTHESIS_PROFILE=fuzz pytest tests/protocol` runs the property tests much longer."""

import os

from hypothesis import settings

settings.register_profile("fuzz", max_examples=5_000, deadline=None)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
