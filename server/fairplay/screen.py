"""The screen: results no human could produce, judged from the server-timed move log.

Pure (no I/O, no engine): `screen` takes a finished game's `Play` (its variant, the server's
milliseconds between its moves, the result, the day's par) and returns a `Verdict`: clean, or
held with its reasons and the figures behind them. The reasoning behind every figure is in
docs/fairplay.md ("The screen"); in short:

* a move is seeing the position, choosing a card (a choice reaction, ~350-450 ms for two
  alternatives, Hick's law adds ~150 ms a bit) and pointing at it (Fitts' law; the
  Keystroke-Level Model's average point is 1.1 s, 0.8-1.5 s); a visual simple reaction alone
  is ~190-250 ms. Expert speed players average ~0.4 s a move (Klondike and FreeCell records).
* So the floors sit far below human play and only sustained figures count: the median
  interval of the game (`Floors.pace_ms` a card action), a run of `BURST_RUN` consecutive
  intervals each below `Floors.burst_ms` a card action (faster than the best clickers'
  ~14 clicks a second, on one spot), and a win's elapsed time below `WIN_FLOOR_MS` a card
  action on average. A single fast move never holds a game.
* The day's solver line (par: the winning line's length) played move for move, at a pace
  under `LINE_PACE_FACTOR` times the floor, is held too: a player who finds the shortest line
  deliberates; one who replays it (scouted with a second account) need not. The line is the
  game's final one, undone moves dropped, and its pace that of the moves left in it: a move
  and its undo (or slow decoys undone) do not hide a replayed line.

Undo entries are left out of the figures (a held key repeats them); draws from the stock
(one click on one spot, nothing to choose) count for bursts but not for the pace; games with
fewer than `MIN_MOVES` card moves are never judged (too few intervals to tell).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from json.encoder import encode_basestring_ascii as _json_str  # json.dumps' own (C)

__all__ = [
    "BURST_RUN",
    "DRAW",
    "FLOORS",
    "MIN_MOVES",
    "UNDO",
    "Evidence",
    "Floors",
    "Play",
    "Reason",
    "Verdict",
    "floors_of",
    "screen",
]

#: Fewest card moves (not undos, not draws) for the figures to mean anything.
MIN_MOVES = 8
#: Consecutive intervals under the burst floor that hold a game.
BURST_RUN = 12
#: Least average milliseconds per card action of a won game's elapsed time.
WIN_FLOOR_MS = 100
#: A par-length final line at under this many times the pace floor is a replayed line.
LINE_PACE_FACTOR = 2
#: Intervals kept in a verdict's evidence (the figures are computed over all of them).
EVIDENCE_INTERVALS = 1_000


class Reason(StrEnum):
    """Why a result is held. Never rename a value: stored in held games and the audit log."""

    MACHINE_PACE = "machine_pace"
    """The game's median move interval is below the variant's human floor."""
    MACHINE_BURST = "machine_burst"
    """`BURST_RUN` consecutive moves each came faster than anyone can see and click."""
    WIN_TIME_FLOOR = "win_time_floor"
    """The win took less time than its moves need at the fastest human pace."""
    SOLVER_LINE_AT_SPEED = "solver_line_at_speed"
    """The day's solver-length line, no undo, at a pace no one who searched for it plays."""
    ACCOUNT_MARKED = "account_marked"
    """The account is marked as cheating (set by the store, not by the figures)."""


@dataclass(frozen=True, slots=True)
class Floors:
    """A variant's human floors: card actions (clicks or drags) one move takes, and the
    floors per action of the median interval and of a burst."""

    actions: int
    pace_ms: int = 150
    burst_ms: int = 50
    #: Whether the day's par counts moves (a winning line) rather than a score.
    par_is_line: bool = True

    @property
    def move_pace_ms(self) -> int:
        return self.actions * self.pace_ms

    @property
    def move_burst_ms(self) -> int:
        return self.actions * self.burst_ms


#: Per variant: a Fourteen Out move removes a pair (two cards to pick), a Tri Peaks move is
#: one click, a Triple Deck move one card to a foundation (par is a score there), a Triple
#: Easthaven move one drag (pointing with the button held: slower, Fitts' law).
FLOORS: dict[str, Floors] = {
    "fourteen-out": Floors(actions=2),
    "triple-fourteens": Floors(actions=2),
    "triple-triangle": Floors(actions=1),
    "triple-deck": Floors(actions=1, par_is_line=False),
    "triple-deck-kings": Floors(actions=1, par_is_line=False),
    "triple-easthaven": Floors(actions=1, pace_ms=200, burst_ms=60),
}
_DEFAULT = Floors(actions=1, par_is_line=False)


def floors_of(variant: str) -> Floors:
    return FLOORS.get(variant, _DEFAULT)


#: The log text of an undo, and of a draw (Tri Peaks, Triple Deck) or deal (Easthaven) from
#: the stock (docs/engine.md): a draw is one click on one spot, no card to find or choose.
UNDO = "undo"
DRAW = "d"


@dataclass(frozen=True, slots=True)
class Play:
    """A finished game as the screen sees it. ``intervals_ms``: the server's milliseconds
    before each logged move (the first counts from the deal being served); ``log``: the
    moves' texts (same length, or empty: all card moves)."""

    variant: str
    intervals_ms: Sequence[int]
    won: bool
    moves: int
    hints: int = 0
    par: int | None = None
    log: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Evidence:
    """The figures the verdict rests on (all milliseconds are the server's)."""

    moves: int
    undos: int
    draws: int
    elapsed_ms: int
    median_ms: int
    first_ms: int
    fastest_ms: int
    longest_fast_run: int
    pace_floor_ms: int
    burst_floor_ms: int
    par: int | None = None
    #: The intervals themselves (every move but undos, draws included, in order, the first
    #: `EVIDENCE_INTERVALS`), for the reviewer.
    intervals_ms: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """Clean (no reasons) or held."""

    reasons: tuple[Reason, ...]
    evidence: Evidence
    notes: tuple[str, ...] = field(default=())

    @property
    def held(self) -> bool:
        return bool(self.reasons)

    def with_reason(self, reason: Reason, note: str) -> Verdict:
        return Verdict((*self.reasons, reason), self.evidence, (*self.notes, note))

    def dumps(self) -> str:
        """The verdict as stored (held games, "screen due" ones, the audit log): what
        ``json.dumps(..., separators=(",", ":"))`` of {reasons, notes, evidence} gives,
        written out (the same bytes, `tests/server/fairplay/test_screen.py`): every daily
        finish stores one (issue #30)."""
        e = self.evidence
        reasons = ",".join(_json_str(str(r.value)) for r in self.reasons)
        notes = ",".join(_json_str(n) for n in self.notes)
        intervals = ",".join(map(str, e.intervals_ms))  # ints (`screen`, `loads`)
        par = "null" if e.par is None else str(int(e.par))
        return (
            f'{{"reasons":[{reasons}],"notes":[{notes}],"evidence":{{'
            f'"moves":{int(e.moves)},"undos":{int(e.undos)},"draws":{int(e.draws)},'
            f'"elapsed_ms":{int(e.elapsed_ms)},"median_ms":{int(e.median_ms)},'
            f'"first_ms":{int(e.first_ms)},"fastest_ms":{int(e.fastest_ms)},'
            f'"longest_fast_run":{int(e.longest_fast_run)},'
            f'"pace_floor_ms":{int(e.pace_floor_ms)},"burst_floor_ms":{int(e.burst_floor_ms)},'
            f'"par":{par},"intervals_ms":[{intervals}]}}}}'
        )

    @classmethod
    def loads(cls, raw: str) -> Verdict:
        d = json.loads(raw)
        e = d["evidence"]
        return cls(
            reasons=tuple(Reason(r) for r in d["reasons"]),
            notes=tuple(str(n) for n in d.get("notes", ())),
            evidence=Evidence(
                moves=int(e["moves"]),
                undos=int(e["undos"]),
                draws=int(e.get("draws", 0)),
                elapsed_ms=int(e["elapsed_ms"]),
                median_ms=int(e["median_ms"]),
                first_ms=int(e["first_ms"]),
                fastest_ms=int(e["fastest_ms"]),
                longest_fast_run=int(e["longest_fast_run"]),
                pace_floor_ms=int(e["pace_floor_ms"]),
                burst_floor_ms=int(e["burst_floor_ms"]),
                par=None if e.get("par") is None else int(e["par"]),
                intervals_ms=tuple(int(i) for i in e.get("intervals_ms", ())),
            ),
        )


def _median(ordered: list[int]) -> int:
    """statistics.median's of sorted intervals (the middle one, or the mean of the two,
    floored), 0 for none."""
    n = len(ordered)
    if not n:
        return 0
    half = n // 2
    return ordered[half] if n % 2 else (ordered[half - 1] + ordered[half]) // 2


def screen(play: Play) -> Verdict:
    """Judge one finished game (see the module docstring). One pass over the log (every
    daily finish runs it, issue #30)."""
    f = floors_of(play.variant)
    intervals, log = play.intervals_ms, play.log
    if log and len(log) != len(intervals):
        raise ValueError("the move log and the intervals differ in length")
    # Undos are left out; draws count for bursts (no one clicks faster than ~14 a second) but
    # not for the pace (a run of quick draws is human clicking, not card finding).
    burst_ms = f.move_burst_ms
    kept: list[int] = []  # every interval but undos', draws' included
    gaps: list[int] = []  # card moves' only (no undo, no draw)
    #: The final line: each move's interval and whether it is a draw, an undone one dropped.
    line: list[tuple[int, bool]] = []
    elapsed = run = longest = 0
    for i, raw in enumerate(intervals):
        g = int(raw)
        if g < 0:
            g = 0
        elapsed += g
        m = log[i] if log else ""
        if m == UNDO:
            if line:
                line.pop()
            continue
        kept.append(g)
        line.append((g, m == DRAW))
        if m != DRAW:
            gaps.append(g)
        if g < burst_ms:
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
    par = play.par if f.par_is_line else None
    n = len(gaps)
    ordered = sorted(gaps)
    median = _median(ordered)
    evidence = Evidence(  # positional, in its field order (cheaper: every finish makes one)
        n,  # moves
        len(intervals) - len(kept),  # undos
        len(kept) - n,  # draws
        elapsed,
        median,
        int(intervals[0]) if intervals else 0,  # first_ms
        ordered[0] if n else 0,  # fastest_ms
        longest,  # longest_fast_run
        f.move_pace_ms,
        burst_ms,
        par,
        tuple(kept[:EVIDENCE_INTERVALS]),
    )
    verdict = Verdict((), evidence)
    if evidence.moves < MIN_MOVES:
        return verdict
    if evidence.median_ms < f.move_pace_ms:
        verdict = verdict.with_reason(
            Reason.MACHINE_PACE,
            f"median move {evidence.median_ms} ms < floor {f.move_pace_ms} ms",
        )
    if evidence.longest_fast_run >= BURST_RUN:
        verdict = verdict.with_reason(
            Reason.MACHINE_BURST,
            f"{evidence.longest_fast_run} moves in a row under {f.move_burst_ms} ms each",
        )
    win_floor = evidence.moves * f.actions * WIN_FLOOR_MS
    if play.won and evidence.elapsed_ms < win_floor:
        verdict = verdict.with_reason(
            Reason.WIN_TIME_FLOOR,
            f"won in {evidence.elapsed_ms} ms < {win_floor} ms for {evidence.moves} moves",
        )
    if play.won and par is not None and len(line) <= par:
        # The line as it stands, its undone moves dropped: a move and its undo added to a
        # replayed line (or slow decoys undone) must not hide it (a helper playing the
        # cheater ranked first so with one undo).
        paced = sorted(g for g, draw in line if not draw)
        line_median = _median(paced)
        if paced and line_median < LINE_PACE_FACTOR * f.move_pace_ms:
            undone = "no undo" if not evidence.undos else f"{evidence.undos} undone"
            verdict = verdict.with_reason(
                Reason.SOLVER_LINE_AT_SPEED,
                f"par line ({len(line)} <= {par} moves, {undone}) at median"
                f" {line_median} ms < {LINE_PACE_FACTOR * f.move_pace_ms} ms",
            )
    return verdict
