"""Per-package line coverage from coverage.py's JSON report, checked against the floors.

``python -m tests.support.coverage_floors [coverage.json]`` prints one line per package and
exits 1 when a package is below its floor (or has no measured file at all), which is how
``make coverage`` fails.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TypedDict

#: The lowest line coverage (percent) each package may have.
FLOORS: dict[str, float] = {"engine": 95.0, "protocol": 95.0, "server": 95.0, "clients": 90.0}


class FileSummary(TypedDict):
    covered_lines: int
    num_statements: int


class FileReport(TypedDict):
    summary: FileSummary


class Report(TypedDict):
    files: dict[str, FileReport]


@dataclass(frozen=True)
class PackageTotal:
    package: str
    covered: int
    statements: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 0.0


def package_totals(report: Report, packages: list[str]) -> list[PackageTotal]:
    """Lines covered and measured per top-level package (a file's first path part)."""
    covered = dict.fromkeys(packages, 0)
    statements = dict.fromkeys(packages, 0)
    for path, file in report["files"].items():
        top = PurePath(path).parts[0]
        if top in covered:
            covered[top] += file["summary"]["covered_lines"]
            statements[top] += file["summary"]["num_statements"]
    return [PackageTotal(p, covered[p], statements[p]) for p in packages]


def failures(totals: list[PackageTotal], floors: dict[str, float]) -> list[str]:
    """One sentence per package under its floor; empty when all pass."""
    return [
        f"{t.package}: {t.percent:.1f} % < {floors[t.package]:.0f} %"
        if t.statements
        else f"{t.package}: no measured lines"
        for t in totals
        if not t.statements or t.percent < floors[t.package]
    ]


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "coverage.json")
    report: Report = json.loads(path.read_text())
    totals = package_totals(report, list(FLOORS))
    for t in totals:
        print(
            f"{t.package:<10} {t.covered:>6} / {t.statements:<6} lines  {t.percent:5.1f} %"
            f"  (floor {FLOORS[t.package]:.0f} %)"
        )
    bad = failures(totals, FLOORS)
    for line in bad:
        print(f"below the floor: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
