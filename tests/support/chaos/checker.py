"""The properties a chaos run must keep, checked on its history and on what Redis stored.

Pure functions: `check` takes the clients' `History` and the stored games and races (read
after the run, once every fault is healed) and returns the violations and the run's figures.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine import new_game
from engine.views import json_map
from server.redis import keys
from tests.support.chaos.history import History, Kind, Op, Outcome
from tests.support.spectating import Replay, replay


class Property(StrEnum):
    DURABLE = "acknowledged moves are durable, in order"
    RETRY_SAFE = "every stored move was sent for its position (retries never apply twice)"
    FRESH = "no read older than an acknowledged write"
    VIEWS = "every view is the stored game's (no hidden card, no wrong state)"
    ONE_DEAL = "one deal per variant per day"
    RACES_END = "every race ends by its time limit plus grace"
    RATED_ONCE = "ratings applied exactly once per race"
    BOARDS = "every board entry matches a finished game"
    SPECTATED = (
        "a spectator never sees a card its racer could not, nor a position after a card turned"
        " up that another racer still playing had not seen"
    )
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
    #: A finished game's board entry as its stored result implies it: the rank key
    #: (`encode_rank_key`) and the finish time.
    rank_key: int | None = None
    finished_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class StoredRace:
    race_id: str
    status: str
    ends_at_ms: int


@dataclass(frozen=True, slots=True)
class RatedResult:
    """A racer's stored result in a finished race: the rating after it and the change, or
    None when the race did not rate them (a private room, a pair met that day, held)."""

    player_id: str
    rating: int | None
    rating_change: int | None


@dataclass(frozen=True, slots=True)
class RecentItem:
    """One of a player's rated races (their ``recent`` list, newest first)."""

    race_id: str
    rating_before: int
    rating_after: int


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A racer's rating as stored: shown now, the rating a newcomer is shown, and their rated
    races, newest first (at most `recent_max`)."""

    player_id: str
    shown: int
    fresh: int
    recent: tuple[RecentItem, ...]
    recent_max: int = 50


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A daily board's entry: the rank key (its ZSET score) and its member's finish time."""

    variant: str
    date: str
    player_id: str
    rank_key: int
    finished_at_ms: int


@dataclass(frozen=True, slots=True)
class Ledgers:
    """What Redis holds about results after the run, beside the games: every race's results
    (the run's races and those in the racers' histories), the racers' ratings, and the
    entries of the daily boards of the games played (keyed by variant and date)."""

    results: Mapping[str, tuple[RatedResult, ...]] = field(default_factory=dict)
    ratings: Mapping[str, StoredRating] = field(default_factory=dict)
    boards: Mapping[tuple[str, str], tuple[BoardEntry, ...]] = field(default_factory=dict)
    #: Races not finished when read (an end under way may have rated them already).
    unsettled: frozenset[str] = frozenset()


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


def cards_in(view: object) -> set[str]:
    """Every card a view shows (``"??"`` is a card face down, the variant is no card)."""
    if isinstance(view, dict):
        return {c for k, v in view.items() if k != "variant" for c in cards_in(v)}
    if isinstance(view, list):
        return {c for v in view for c in cards_in(v)}
    return {view} if isinstance(view, str) and view != "??" else set()


def _check_spectated(
    v: list[Violation], history: History, games: Mapping[str, StoredGame], truth: _Truth
) -> int:
    """SPECTATED (docs/fairplay.md): each board a spectator was shown is the racer's own view
    at its seq (no card the racer could not see, no mask), and unless the race was over, every
    card the racer had turned up by then (by label: `tests.support.spectating`) had been seen
    by each other racer of the race the spectator had not been told had stopped playing (the
    server moves a board on for a stop only once it has handled, and so sent, its event).
    What they had seen is bounded by the moves they had sent before the board came. A run of
    such boards tells nothing of a card one of them has not seen: not by a card shown, nor by
    a move onto or off one. Returns the boards checked."""
    replays: dict[str, Replay] = {}

    def replay_of(g: StoredGame) -> Replay:
        if g.game_id not in replays:
            replays[g.game_id] = replay(g.variant, g.seed, g.moves)
        return replays[g.game_id]

    sent: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for op in history.ops:
        if op.kind is Kind.MOVE and op.expected_seq is not None:
            sent[op.game_id].append((op.sent_at, op.expected_seq + 1))
    racers: dict[str, list[StoredGame]] = defaultdict(list)
    for g in games.values():
        k = keys.parse_game_id(g.game_id) if g.kind == "race" else None
        if isinstance(k, keys.RaceGameKeys):
            racers[k.race_id].append(g)

    checked = 0
    for board in history.boards:
        game_id = keys.race_game_id(board.race_id, board.player_id)
        stored = games.get(game_id)
        if stored is None:
            v.append(Violation(Property.SPECTATED, f"{board.client}: {game_id} not stored"))
            continue
        checked += 1
        where = f"{board.client}: {game_id} seq {board.seq}"
        if _norm(board.view) not in truth.views(game_id, board.seq):
            shown = cards_in(board.view)
            own = [cards_in(json.loads(x)) for x in truth.views(game_id, board.seq)]
            extra = sorted(shown - set().union(*own)) if own else sorted(shown)
            v.append(Violation(Property.SPECTATED, f"{where}: not the racer's view {extra}"))
            continue
        if board.final or not 0 <= board.seq <= len(stored.moves):
            continue
        known: frozenset[int] | None = None
        for other in racers[board.race_id]:
            pid = keys.parse_game_id(other.game_id).player_id
            if other.game_id == game_id or pid in board.stopped:
                continue
            played = min(
                len(other.moves),
                max((n for at, n in sent[other.game_id] if at < board.at), default=0),
            )
            seen = replay_of(other).seen_by(played)
            known = seen if known is None else known & seen
        if known is None:
            continue
        unseen = replay_of(stored).seen_by(board.seq) - known
        if unseen:
            v.append(
                Violation(
                    Property.SPECTATED,
                    f"{where}: a position after {len(unseen)} card(s) turned up that a racer"
                    " still playing had not seen",
                )
            )
    return checked


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
    ledgers: Ledgers | None = None,
) -> Report:
    """Every property of `Property`, and the figures of the run.

    ``now_ms`` is the servers' clock when the races were read; a race must be finished once
    ``ends_at + grace + race_slack`` is past. A client disconnected later than
    ``run_end - resume_window`` need not have resumed. `ledgers` (results, ratings, boards)
    are checked when given."""
    ledgers = ledgers or Ledgers()
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

    _check_ratings(v, ledgers)
    entries = _check_boards(v, games, ledgers)

    # SPECTATED: a spectator's board is its racer's own view at its seq, and while the race
    # runs it is of a position by which every card the racer had turned up was seen by every
    # other racer who could still be playing when the board came.
    spectated = _check_spectated(v, history, games, truth)

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
        "private rooms made": _ok(history, Kind.RACE_CREATE),
        "races watched": _ok(history, Kind.WATCH),
        "spectator boards checked": spectated,
        "rated races": sum(
            any(r.rating is not None for r in results) for results in ledgers.results.values()
        ),
        "board entries checked": entries,
    }
    return report


def _ok(history: History, kind: Kind) -> int:
    return sum(op.kind is kind and op.outcome is Outcome.OK for op in history.ops)


def _check_ratings(v: list[Violation], ledgers: Ledgers) -> None:
    """RATED_ONCE: each racer a finished race rated has that race once in their history, with
    the race's result; nobody else has it; each history chains (every race's rating before
    is the one after the previous race) up to the rating shown now."""
    for race_id, results in ledgers.results.items():
        for r in results:
            stored = ledgers.ratings.get(r.player_id)
            items = [i for i in stored.recent if i.race_id == race_id] if stored else []
            if r.rating is None:
                if items:
                    v.append(
                        Violation(Property.RATED_ONCE, f"{race_id} unrated, yet in {r.player_id}'s")
                    )
                continue
            if len(items) != 1:
                v.append(
                    Violation(
                        Property.RATED_ONCE, f"{race_id} {len(items)} times in {r.player_id}'s"
                    )
                )
                continue
            item = items[0]
            if (item.rating_after, item.rating_after - item.rating_before) != (
                r.rating,
                r.rating_change,
            ):
                v.append(
                    Violation(
                        Property.RATED_ONCE,
                        f"{race_id} {r.player_id}: result {r.rating} ({r.rating_change:+}), "
                        f"history {item.rating_before} -> {item.rating_after}",
                    )
                )
    for pid, rating in ledgers.ratings.items():
        recent = rating.recent
        for item in recent:
            if item.race_id in ledgers.unsettled:
                continue
            mine = [r for r in ledgers.results.get(item.race_id, ()) if r.player_id == pid]
            if not mine or mine[0].rating is None:
                v.append(
                    Violation(
                        Property.RATED_ONCE, f"{pid} rated by {item.race_id}, not a rated result"
                    )
                )
        for newer, older in itertools.pairwise(recent):
            if newer.rating_before != older.rating_after:
                v.append(
                    Violation(
                        Property.RATED_ONCE,
                        f"{pid}: {older.race_id} left {older.rating_after}, "
                        f"{newer.race_id} began at {newer.rating_before}",
                    )
                )
        expected = recent[0].rating_after if recent else rating.fresh
        if rating.shown != expected:
            v.append(
                Violation(Property.RATED_ONCE, f"{pid} shown {rating.shown}, history {expected}")
            )
        if recent and len(recent) < rating.recent_max and recent[-1].rating_before != rating.fresh:
            v.append(
                Violation(
                    Property.RATED_ONCE,
                    f"{pid}: first race began at {recent[-1].rating_before}, not {rating.fresh}",
                )
            )


def _check_boards(v: list[Violation], games: Mapping[str, StoredGame], ledgers: Ledgers) -> int:
    """BOARDS: each entry of a daily board read is a stored finished game of that board with
    that result (rank key) and finish time, and each finished daily game of a board read has
    its entry. Returns how many entries were checked."""
    checked = 0
    for (variant, date), entries in ledgers.boards.items():
        on_board = set()
        for e in entries:
            checked += 1
            game_id = keys.daily_game_id(variant, _date(date), e.player_id)
            on_board.add(game_id)
            g = games.get(game_id)
            if g is None or not g.finished:
                state = "not stored" if g is None else "not finished"
                v.append(Violation(Property.BOARDS, f"entry of {game_id}: game {state}"))
            elif (g.rank_key, g.finished_at_ms) != (e.rank_key, e.finished_at_ms):
                v.append(
                    Violation(
                        Property.BOARDS,
                        f"entry of {game_id}: {e.rank_key} at {e.finished_at_ms}, "
                        f"game {g.rank_key} at {g.finished_at_ms}",
                    )
                )
        for g in games.values():
            if (
                g.kind == "daily"
                and g.finished
                and (g.variant, g.date) == (variant, date)
                and g.game_id not in on_board
            ):
                v.append(Violation(Property.BOARDS, f"{g.game_id} finished, no board entry"))
    return checked


def _date(iso: str) -> dt.date:
    return dt.date.fromisoformat(iso)


def _applied(op: Op, games: Mapping[str, StoredGame]) -> bool:
    """Whether a move whose reply said nothing certain was stored at the seq it was sent for.
    (The clients always send ``expected_seq``, so a retry can never apply it twice.)"""
    stored = games.get(op.game_id)
    if stored is None or op.expected_seq is None:
        return False
    return len(stored.moves) > op.expected_seq and stored.moves[op.expected_seq] == op.move
