"""GC tuning of a long-running process (the process-wide gc settings are restored)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from server.runtime import gctune


@pytest.fixture
def restore_gc() -> Iterator[None]:
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if enabled else gc.disable)()


@pytest.mark.usefixtures("restore_gc")
def test_tune_raises_the_young_threshold_and_freezes_what_exists() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    survivor = [object()]  # a tracked container alive at tune time
    assert any(o is survivor for o in gc.get_objects())
    gctune.tune()
    assert gc.get_threshold() == (gctune.YOUNG_THRESHOLD, *gctune.OLDER_THRESHOLDS)
    assert gc.get_threshold()[0] > 700, "above the default young threshold"
    assert gc.get_freeze_count() > 0
    # frozen: in the permanent generation, which collections (and get_objects) skip
    assert not any(o is survivor for o in gc.get_objects())
    later = [object()]
    assert any(o is later for o in gc.get_objects()), "what comes after is collected as usual"


@pytest.mark.usefixtures("restore_gc")
async def test_startup_hook_tunes() -> None:
    gc.set_threshold(700, 10, 10)
    await gctune.tune_after_startup(None)  # type: ignore[arg-type]
    assert gc.get_threshold()[0] == gctune.YOUNG_THRESHOLD
