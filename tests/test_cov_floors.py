"""`make coverage`'s per-package totals and floors (`tests.support.coverage_floors`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.coverage_floors import (
    FLOORS,
    PackageTotal,
    Report,
    failures,
    main,
    package_totals,
)


def report(**files: tuple[int, int]) -> Report:
    """A coverage.py JSON report: path -> (covered lines, statements)."""
    return {
        "files": {
            path.replace("__", "/") + ".py": {
                "summary": {"covered_lines": covered, "num_statements": statements}
            }
            for path, (covered, statements) in files.items()
        }
    }


def test_totals_add_up_per_top_level_package() -> None:
    doc = report(
        engine__game=(90, 100),
        engine__solvers__base=(10, 10),
        server__app=(50, 100),
        tests__x=(0, 500),
    )
    totals = package_totals(doc, ["engine", "server", "clients"])
    assert totals == [
        PackageTotal("engine", 100, 110),
        PackageTotal("server", 50, 100),
        PackageTotal("clients", 0, 0),
    ]
    assert totals[0].percent == pytest.approx(90.909, abs=0.001)


def test_a_package_below_its_floor_or_unmeasured_fails() -> None:
    totals = [
        PackageTotal("engine", 95, 100),
        PackageTotal("server", 949, 1000),
        PackageTotal("clients", 0, 0),
    ]
    assert failures(totals, FLOORS) == ["server: 94.9 % < 95 %", "clients: no measured lines"]
    assert failures([PackageTotal("clients", 9, 10)], FLOORS) == []


def test_main_prints_each_package_and_exits_1_below_a_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "coverage.json"
    path.write_text(
        json.dumps(
            report(
                engine__a=(96, 100),
                protocol__b=(100, 100),
                server__c=(95, 100),
                clients__d=(89, 100),
            )
        )
    )
    assert main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()] == list(FLOORS)
    assert "clients: 89.0 % < 90 %" in err and "server" not in err
    path.write_text(
        json.dumps(
            report(
                engine__a=(96, 100),
                protocol__b=(100, 100),
                server__c=(95, 100),
                clients__d=(90, 100),
            )
        )
    )
    assert main([str(path)]) == 0
