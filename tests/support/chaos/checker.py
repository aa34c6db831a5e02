"""The properties a chaos run must keep, checked on its history and on what Redis stored.

Pure functions: `check` takes the clients' `History` and the stored games and races (read
after the run, once every fault is healed) and returns the violations and the run's figures.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine import new_game
from engine.views import json_map
from tests.support.chaos.history import History, Kind, Op, Outcome


class Property(StrEnum):
    DURABLE = "acknowledged moves are durable, in order"
    RETRY_SAFE = "every stored move was sent for its position (retries never apply twice)"
    FRESH = "no read older than an acknowledged write"
    VIEWS = "every view is the stored game's (no hidden card, no wrong state)"
    ONE_DEAL = "one deal per variant per day"
    RACES_END = "every race ends by its time limit plus grace"
    RESUMED = "every client reconnected and resumed"


@dataclass(frozen=True, slots=True)
class StoredGame:
    game_id: str
    kind: str
    variant: str
    date: str
    seed: int
    moves: tuple[str, ...]
    finished: bool = False


@dataclass(frozen=True, slots=True)
class StoredRace:
    race_id: str
    status: str
    ends_at_ms: int


@dataclass(frozen=True, slots=True)
class Violation:
    prop: Property
    detail: str


@dataclass(slots=True)
class Report:
    violations: list[Violation] = field(default_factory=list)
    figures: dict[str, int] = field(default_factory=dict)

    def by_property(self) -> dict[Property, int]:
        counts = dict.fromkeys(Property, 0)
        for v in self.violations:
            counts[v.prop] += 1
        return counts


def _norm(view: object) -> str:
    return json.dumps(view, sort_keys=True)


class _Truth:
    """The stored games replayed through the engine: the views a player may be shown after
    each of their moves. After the last move of a finished game there are three: the game as
    played, as acknowledged while its game-over search still ran (not yet over: the server
    answers a move before a long search ends, `GameService._judge`), and once finished (over,
    nothing to undo), as every server process shows a finished game (`GameService._build`)."""

    def __init__(self, games: Mapping[str, StoredGame]) -> None:
        self.games = games
        self._views: dict[str, list[set[str]]] = {}

    def views(self, game_id: str, seq: int) -> set[str]:
        views = self._views.get(game_id)
        if views is None:
            g = self.games[game_id]
            game = new_game(g.variant, g.seed)
            views = [{_norm(json_map(game.view()))}]
            for text in g.moves:
                game.play(text)
                views.append({_norm(json_map(game.view()))})
            if g.finished:
                game.defer_over()
                views[-1].add(_norm(json_map(game.view())))
                game.settle_over(True)
                game.seal()
                views[-1].add(_norm(json_map(game.view())))
            self._views[game_id] = views
        return views[seq] if 0 <= seq < len(views) else set()


def check(
    history: History,
    games: Mapping[str, StoredGame],
    races: Mapping[str, StoredRace],
    *,
    now_ms: int,
    grace_ms: int,
    race_slack_ms: int,
    run_end: float,
    resume_window: float,
) -> Report:
    """Every property of `Property`, and the figures of the run.

    ``now_ms`` is the servers' clock when the races were read; a race must be finished once
    ``ends_at + grace + race_slack`` is past. A client disconnected later than
    ``run_end - resume_window`` need not have resumed."""
    report = Report()
    v = report.violations
    acks: dict[str, list[Op]] = defaultdict(list)
    for op in history.ops:
        if op.kind is Kind.MOVE and op.outcome is Outcome.OK and op.seq is not None:
            acks[op.game_id].append(op)

    # DURABLE: an acknowledged move sits at its position in the stored log, and two
    # acknowledgements never give one position two different moves.
    for game_id, game_acks in acks.items():
        stored = games.get(game_id)
        seen: dict[int, str] = {}
        for op in game_acks:
            assert op.seq is not None
            if seen.setdefault(op.seq, op.move) != op.move:
                v.append(Violation(Property.DURABLE, f"{game_id} seq {op.seq} acked twice"))
            moves = stored.moves if stored is not None else ()
            got = moves[op.seq - 1] if 0 < op.seq <= len(moves) else None
            if got != op.move:
                v.append(
                    Violation(
                        Property.DURABLE,
                        f"{game_id} move {op.seq} {op.move!r} acked by {op.client}, stored {got!r}",
                    )
                )

    # RETRY_SAFE: whatever its reply said (acknowledged, `unavailable`, lost), a move is only
    # ever stored at the position its ``expected_seq`` named: a client that resends it after
    # an unknown outcome cannot have it played twice.
    sent: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for op in history.ops:
        if op.kind is Kind.MOVE and op.expected_seq is not None:
            sent[op.game_id].add((op.expected_seq, op.move))
    for game_id, game_sent in sent.items():
        stored_game = games.get(game_id)
        for pos, move in enumerate(stored_game.moves if stored_game else ()):
            if (pos, move) not in game_sent:
                v.append(
                    Violation(Property.RETRY_SAFE, f"{game_id} move {pos + 1} {move!r} never sent")
                )

    # FRESH: a read returns at least every move acknowledged before the read was sent.
    for op in history.ops:
        if op.kind not in (Kind.GET, Kind.START) or op.outcome is not Outcome.OK:
            continue
        if op.seq is None:
            continue
        before = [a.seq for a in acks.get(op.game_id, ()) if a.done_at < op.sent_at and a.seq]
        if before and op.seq < max(before):
            v.append(
                Violation(
                    Property.FRESH,
                    f"{op.client} read {op.game_id} at seq {op.seq} after seq {max(before)} "
                    "was acknowledged",
                )
            )

    # VIEWS: every view received is the stored game replayed to that seq.
    truth = _Truth(games)
    checked = 0
    for op in history.ops:
        if op.view is None or op.seq is None or op.outcome is not Outcome.OK:
            continue
        if op.game_id not in games:
            v.append(Violation(Property.VIEWS, f"{op.client}: view of unknown game {op.game_id}"))
            continue
        checked += 1
        if _norm(op.view) not in truth.views(op.game_id, op.seq):
            v.append(
                Violation(Property.VIEWS, f"{op.client}: {op.game_id} seq {op.seq} view differs")
            )

    # ONE_DEAL: every daily game of a variant and day has the same seed.
    seeds: dict[tuple[str, str], set[int]] = defaultdict(set)
    for g in games.values():
        if g.kind == "daily":
            seeds[(g.variant, g.date)].add(g.seed)
    for (variant, date), found in seeds.items():
        if len(found) > 1:
            v.append(Violation(Property.ONE_DEAL, f"{variant} {date}: {len(found)} deals"))

    # RACES_END: past its deadline (plus grace and repair slack), a race is finished.
    for race_id in history.races:
        stored_race = races.get(race_id)
        if stored_race is None:
            v.append(Violation(Property.RACES_END, f"race {race_id} not stored"))
            continue
        due = stored_race.ends_at_ms + grace_ms + race_slack_ms
        if now_ms >= due and stored_race.status != "finished":
            v.append(
                Violation(
                    Property.RACES_END,
                    f"race {race_id} still {stored_race.status} {now_ms - due} ms past due",
                )
            )

    # RESUMED: a client that lost its connection made a successful request afterwards.
    for session in history.sessions.values():
        for lost in session.disconnects:
            if lost > run_end - resume_window:
                continue
            if not any(ok > lost for ok in session.successes):
                v.append(Violation(Property.RESUMED, f"{session.client} lost at {lost:.1f} s"))
                break

    unavailable = [
        op
        for op in history.ops
        if op.kind is Kind.MOVE and op.outcome is Outcome.ERROR and op.code == "unavailable"
    ]
    unknown = [op for op in history.ops if op.kind is Kind.MOVE and op.outcome is Outcome.LOST]
    report.figures = {
        "requests": len(history.ops),
        "acknowledged moves": sum(len(a) for a in acks.values()),
        "games": len({op.game_id for op in history.ops if op.game_id}),
        "views checked": checked,
        "races": len(history.races),
        "disconnects": sum(len(s.disconnects) for s in history.sessions.values()),
        "faults": len(history.faults),
        "unavailable moves": len(unavailable),
        "unavailable yet applied": sum(_applied(op, games) for op in unavailable),
        "lost replies": len(unknown),
        "lost yet applied": sum(_applied(op, games) for op in unknown),
    }
    return report


def _applied(op: Op, games: Mapping[str, StoredGame]) -> bool:
    """Whether a move whose reply said nothing certain was stored at the seq it was sent for.
    (The clients always send ``expected_seq``, so a retry can never apply it twice.)"""
    stored = games.get(op.game_id)
    if stored is None or op.expected_seq is None:
        return False
    return len(stored.moves) > op.expected_seq and stored.moves[op.expected_seq] == op.move
