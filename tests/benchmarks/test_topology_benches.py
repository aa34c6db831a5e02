"""The topology benchmarks (three servers behind HAProxy) at their smallest size, so they do not
rot: each runs in a few seconds and must come out clean. No timing is asserted here (the
figures are in docs/performance.md); what is asserted would fail if the benchmark measured
nothing: the killed process's players were cut and all resumed at their acknowledged move,
and every midnight start got the new day's deal, stored (certified) before midnight.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks import midnight_rush, reconnect_storm
from benchmarks.load.topology import percentile_ms, source_address
from engine import VARIANT_IDS


def test_source_addresses_and_percentiles() -> None:
    assert source_address(0, 300) == "127.77.0.1"
    assert source_address(251, 300) == "127.77.1.2"
    assert source_address(300, 300) == "127.77.0.1"
    assert percentile_ms([0.001, 0.002, 0.003], 50) == 2.0
    assert math.isnan(percentile_ms([], 99))


def test_reconnect_storm_smallest(tmp_path: Path) -> None:
    out = tmp_path / "storm.json"
    f = reconnect_storm.main(["--players", "30", "--json", str(out)])
    assert f.players == 30 and not f.setup_errors
    assert f.on_killed > 0
    assert f.cut == f.on_killed == f.resumed  # the kill cut exactly s1's players
    assert f.attempts >= f.cut
    assert f.marked_down == ["s1"], f.marked_down  # the killed one, and only it
    assert not f.errors, f.errors  # every game.get answered the acknowledged seq
    assert f.hello_p99_ms > 0 and f.all_back_s > 0
    line = json.loads(out.read_text())
    assert line["bench"] == "reconnect_storm" and line["machine"]["cores"] >= 1


def test_midnight_rush_smallest(tmp_path: Path) -> None:
    out = tmp_path / "rush.json"
    args = ["--players", "12", "--solver-budget", "0.05", "--json", str(out)]
    try:
        f = midnight_rush.main([*args, "--lead", "14"])
    except midnight_rush.LeadTooShort:  # a busy machine: the setup, not the rush, was slow
        f = midnight_rush.main([*args, "--lead", "40"])
    assert f.players == 12 and not f.setup_errors
    assert f.deals_stored_ahead == len(VARIANT_IDS)  # every new-day deal, before midnight
    # (with a 0.05 s budget a busy machine may leave one uncertified: then it has no par)
    assert f.deals_certified >= 1
    assert f.started == 12 and not f.errors, f.errors
    assert f.with_par >= 1 and f.par_mismatch == 0
    assert f.certification_lines_before_midnight > 0  # the log check can see one
    assert f.certification_lines_after_midnight == 0
    assert json.loads(out.read_text())["bench"] == "midnight_rush"
