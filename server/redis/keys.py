"""Every Redis key name the server uses, and game-id parsing.

Layout (``{...}`` is the Redis Cluster hash tag: keys used together by one script or
transaction share it, so they live in one slot)::

    sol:{players}:p:<pid>                    hash   name, token_hash, created_at_ms
    sol:{players}:by_name                    hash   casefold(name) -> pid
    sol:{players}:by_token                   hash   sha256(token) hex -> pid
    sol:{players}:by_fold                    hash   fold_name(name) (look-alikes folded) -> pid
    sol:{players}:folded                     string set once by_fold holds every older player
    sol:{players}:hint:<pid>                 string held while a hint of the player is computed
    sol:{players}:devices:<pid>              set    sha256 of tokens of devices signed in by code
    sol:{players}:signin:<sha256(code)>      string pid: a live sign-in code (5 minutes, single use)
    sol:{players}:signin_of:<pid>            string sha256 of the player's one live sign-in code
    sol:{players}:revocations                stream a player one of whose tokens died (``p``)
    sol:{lim:<hour>:<address group>}:signin  string sign-in code attempts from the address that hour
    sol:{lim:<hour>:<address group>}:accounts string players created from the address that hour
    sol:{d:<variant>:<date>}:board           zset   "<finished_at_ms:013d>:<pid>" -> rank key
    sol:{d:<variant>:<date>}:members         hash   pid -> board member
    sol:{d:<variant>:<date>}:entries         hash   pid -> entry JSON
    sol:{d:<variant>:<date>}:outbox          zset   game id -> ms its finish began (board step due)
    sol:{d:<variant>:<date>}:started         zset   game id -> ms it was started (rollover sweep)
    sol:{d:<variant>:<date>}:closed          string ms the day was closed: no game of it can change
    sol:{d:<variant>:<date>:<pid>}:g         hash   a daily game's record
    sol:{d:<variant>:<date>:<pid>}:log       list   its move texts in order ("undo" for undo)
    sol:{d:<variant>:<date>}:deal            string the day's deal JSON (seed, par; secret)
    sol:{d:<variant>:<date>}:deal-lock       string held by the process computing the deal
    sol:{d:<variant>:<date>}:tiers           string the day's tier deals JSON (seeds; secret)
    sol:{d:<variant>:<date>}:tiers-lock      string held by the process certifying the tiers
    sol:{d:<variant>:<date>}:catchup         string the day's catch-up deals JSON (secret all month)
    sol:{d:<variant>:<date>}:catchup-lock    string held by the process certifying them
    sol:{t:<tier>:<variant>:<date>}:board|members|entries|outbox  a tier's own board (as daily)
    sol:{t:<tier>:<variant>:<date>:<pid>}:g|log|times  a ranked tier game (as a daily game)
    sol:{c:<tier>:<variant>:<date>:<pid>}:g|log|times  a catch-up game (on no board)
    sol:{h:<pid>}:crowns:<YYYY-MM>           hash   "<variant>|<date>|<tier>" -> crowns won
    sol:{h:<pid>}:months                     zset   month number (year*12+month-1) -> crowns
    sol:{h:<pid>}:cal:<YYYY-MM>              set    "<DD>|<variant>|<tier>|r|c" tier games started
                                                    that month ("*": older games backfilled)
    sol:{r:<race_id>}:race                   hash   race state (variant, seed, status, times...)
    sol:{r:<race_id>}:racers                 hash   pid -> name
    sol:{r:<race_id>}:order                  list   pids in joining order
    sol:{r:<race_id>}:seen                   hash   pid -> last time a server saw it connected
    sol:{r:<race_id>}:present                zset   "<pid>|<process>" -> live until (ms)
    sol:{r:<race_id>}:progress               hash   pid -> progress JSON (never a card)
    sol:{r:<race_id>}:events                 stream the race's versioned public event log
    sol:{r:<race_id>}:board|members|entries  the race's own standings, as a daily board (no outbox)
    sol:{r:<race_id>}:g:<pid> / :log:<pid>   each racer's game record and move log
    sol:{rooms}:code:<CODE>                  string private room code -> race id
    sol:{rooms}:made:<pid>                   zset   rooms the player created in the last hour
    sol:{rooms}:rematch:<race_id>            string the rematch room of a race that is over (v7)
    sol:{rooms}:offer:<race_id>              hash   a rematch room's offer (of, by, invited, ...)
    sol:{rooms}:offers                       zset   rematch room id -> when its offer expires
    sol:{q}:<variant>:<size>                 zset   race queue: pid -> enqueued at ms
    sol:{q}:who                              hash   pid -> "<variant>:<size>" (one queue each)
    sol:{q}:addr                             hash   pid -> client address (queued players)
    sol:{q}:inrace                           hash   pid -> race id of the player's current race
    sol:{q}:matched                          hash   pid -> ms the queue matched them (race unmade)
    sol:{q}:making                           hash   race id -> its match (JSON) until made
    sol:{q}:turn:<pid>                       string held while a race request of the player runs
    sol:{ra}:active                          zset   race id -> time its next deadline is due
    sol:{rf:<variant>}:finished              zset   race id -> when its end began (latest 1,000)
    sol:{rt:<variant>}:board                 zset   pid -> displayed rating (race board)
    sol:{rt:<variant>}:stats                 hash   pid -> rating JSON (mu, sigma, wins, ...)
    sol:{rt:<variant>}:applied               set    race ids already rated (exactly once)
    sol:{rt:<variant>}:recent:<pid>          list   the player's latest race summaries
    sol:{rt:<variant>}:pairs:<date>          set    "<pid>|<pid>" pairs rated against each other
    sol:{rw:<variant>:<date>}:board          zset   pid -> races won that day
    sol:{rw:<variant>:<date>}:applied        set    race ids whose win is counted (once)
    sol:{h:<pid>}:days:<variant>             zset   UTC day numbers with a finished daily game
    sol:{h:<pid>}:won:<variant>              zset   UTC day numbers with a won daily game
    sol:{h:<pid>}:res:<variant>              hash   day number -> result JSON (players.history)
    sol:{h:<pid>}:rank:<variant>             hash   day number -> "rank:total" once the day is over
    sol:{h:<pid>}:stats:<variant>            hash   totals, bests, streak runs, percentile sums
    sol:{h:<pid>}:pending                    set    daily game ids being finished (an outbox)
    sol:{r:<race_id>}:watchers               hash   server process id -> spectators there
    sol:{r:<race_id>}:watchers:alive         zset   server process id -> its count counts until (ms)
    sol:{d:<variant>:<date>:<pid>}:times     list   ms between a daily game's moves (fair play)
    sol:{r:<race_id>}:times:<pid>            list   the same for a racer's game
    sol:{f:<free_id>}:g / :log / :times      a free game's record, move log and times (protocol 7)
    sol:{lim:<hour>:p:<pid>}:free            string free games the player started that hour
    sol:{fp}:held                            zset   game ids held by the screen -> finished at ms
    sol:{fp}:marked                          hash   pid -> mark JSON (confirmed cheaters)
    sol:{fp}:audit                           list   review actions, JSON, oldest first
    sol:{fp}:gen                             string bumped by each review that changes a board
    sol:{od:<date>}:file                     hash   gen, gz: the day's open-data file (base64)
    sol:{od:<date>}:building                 string held by the process building that file

A game's ``times`` list has one entry per logged move (undo included): the server's
milliseconds since the previous move, the first since the deal was served (`server.fairplay`).
The ``{fp}`` keys are the review desk's (`server.fairplay.review`): small, read by the admin
tool, checked once per finish (``marked``).

Each daily game has its own tag (``{d:<variant>:<date>:<pid>}``), not its board's: the moves of
one board's players spread over every master of a cluster. So finishing a daily game is two
single-slot steps (`server.games.store`): the game's script marks it finished with the board entry
it implies and a ``pending`` mark, then the board's script writes the entry (idempotently) and
takes the game out of the board's ``outbox``; the mark is cleared last. A race's games keep the
race's tag: a race has a handful of racers and each race its own random slot already, and its
finish stays one atomic script.

A player's history keys share the ``{h:<pid>}`` tag (one script updates them together); the
day lists keep `HISTORY_KEEP_DAYS` days and are trimmed on every write.

Channels (pub/sub fan-out between server processes; payloads are `server.redis.pubsub` messages):
``sol:chan:race:<race_id>`` and ``sol:chan:player:<pid>``. A race id matches
`RACE_ID_PATTERN`, ``YYYYMMDD-<random>``; it is made only by `new_race_id`.

Game ids: ``d.<variant>.<YYYY-MM-DD>.<player_id>`` (daily games), ``r.<race_id>.<player_id>``
(race games; a race id starts with its UTC creation date, ``YYYYMMDD-<random>``),
``f.<free_id>.<player_id>`` (free games, unranked: a free id has a race id's shape),
``t.<tier>.<variant>.<YYYY-MM-DD>.<player_id>`` (a ranked tier game of that day: easy, hard
or expert; the medium tier is the daily game itself) and
``c.<tier>.<variant>.<YYYY-MM-DD>.<player_id>`` (a catch-up game of a past day of the month,
any tier: on no board, in no history). A ranked tier game is enlisted in its day's
``started`` index like a daily game, so the day's close settles it too.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass, field
from typing import TypeAlias

from server.runtime.errors import NotFound

__all__ = [
    "PREFIX",
    "DailyGameKeys",
    "accounts_by_address",
    "calendar_games",
    "daily_board",
    "daily_closed",
    "daily_entries",
    "daily_game",
    "daily_game_id",
    "daily_game_tag",
    "daily_log",
    "daily_members",
    "daily_outbox",
    "daily_started",
    "daily_tag",
    "free_game_id",
    "free_started",
    "hint_lock",
    "hint_solver_ms",
    "new_race_id",
    "parse_game_id",
    "player",
    "player_devices",
    "player_pattern",
    "players_by_fold",
    "players_by_name",
    "players_by_token",
    "players_folded",
    "race_channel",
    "race_date",
    "race_tag",
    "revocations",
    "room_misses",
    "signin_attempts",
    "signin_code",
    "signin_code_of",
    "signin_named_attempts",
    "signin_tries_used_of",
    "tier_game_id",
    "valid_player_id",
    "valid_race_id",
    "valid_variant",
]

PREFIX = "sol:"

_VARIANT_RE = re.compile(r"[a-z0-9_-]{1,32}")
_PID_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: The one shape of a race id: its UTC creation date, a dash, a random part.
RACE_ID_PATTERN = r"(\d{8})-[A-Za-z0-9_]{4,24}"
_RACE_RE = re.compile(RACE_ID_PATTERN)
_FREE_GAME_RE = re.compile(rf"f\.({RACE_ID_PATTERN})\.([A-Za-z0-9_-]{{1,32}})")
_GAME_ID_RE = re.compile(
    r"(?:d|([tc])\.(easy|medium|hard|expert))\.([a-z0-9_-]{1,32})\.(\d{4}-\d{2}-\d{2})"
    r"\.([A-Za-z0-9_-]{1,32})"
)
#: The tiers of a day, easiest first (`engine.difficulty.Tier` values; the medium tier is the
#: daily game).
TIER_NAMES: tuple[str, ...] = ("easy", "medium", "hard", "expert")
#: The tier the daily game stands for.
DAILY_TIER = "medium"
_RACE_GAME_RE = re.compile(rf"r\.({RACE_ID_PATTERN})\.([A-Za-z0-9_-]{{1,32}})")


def valid_variant(variant: str) -> bool:
    """Variants are lowercase ``[a-z0-9_-]{1,32}`` (no ``.``, ``:``, braces: they delimit)."""
    return _VARIANT_RE.fullmatch(variant) is not None


def valid_player_id(pid: str) -> bool:
    return _PID_RE.fullmatch(pid) is not None


def _variant(variant: str) -> str:
    if not valid_variant(variant):
        raise ValueError(f"bad variant name: {variant!r}")
    return variant


def _pid(pid: str) -> str:
    if not valid_player_id(pid):
        raise ValueError(f"bad player id: {pid!r}")
    return pid


# -- players ------------------------------------------------------------------------------

_PLAYERS = PREFIX + "{players}:"


def player(pid: str) -> str:
    return f"{_PLAYERS}p:{_pid(pid)}"


def player_pattern() -> str:
    """SCAN pattern matching every player hash."""
    return f"{_PLAYERS}p:*"


def players_by_name() -> str:
    return f"{_PLAYERS}by_name"


def players_by_token() -> str:
    return f"{_PLAYERS}by_token"


def revocations() -> str:
    """Every token death (a rotation, `token.revoke_all`, `device.revoke`), the player's id
    in field ``p``, written by the script that kills the token: each process's session
    sweep reads what is new here rather than every connected player's tokens (`server.app`)."""
    return f"{_PLAYERS}revocations"


def players_by_fold() -> str:
    """Folded name (`server.players.names.fold_name`) -> pid: look-alike names are one name."""
    return f"{_PLAYERS}by_fold"


def players_folded() -> str:
    """Marks that `players_by_fold` was filled in for the players created before it existed."""
    return f"{_PLAYERS}folded"


def hint_lock(pid: str) -> str:
    """Held while one of the player's hints is being computed (one in flight per player)."""
    return f"{_PLAYERS}hint:{_pid(pid)}"


def player_devices(pid: str) -> str:
    """The SHA-256 digests of the tokens of the player's devices signed in by a code (each
    also in `players_by_token`; the player hash's ``token_hash`` is the first device's)."""
    return f"{_PLAYERS}devices:{_pid(pid)}"


def player_device_info(pid: str) -> str:
    """Device id -> ``how|signed in at ms|token digest|name`` of each of the player's devices
    signed in by a code (`server.players.devices`; the original device is the player hash's
    ``token_hash``, ``orig_*`` fields)."""
    return f"{_PLAYERS}devinfo:{_pid(pid)}"


def player_revoked(pid: str) -> str:
    """Token digests of the player's devices revoked one by one (`device.revoke`): the
    session sweep closes the sessions still open with them."""
    return f"{_PLAYERS}revoked:{_pid(pid)}"


_DIGEST_RE = re.compile(r"[0-9a-f]{64}")


def signin_code(code_hash: str) -> str:
    """A live sign-in code, by the SHA-256 hex digest of its text: the player's id."""
    if not _DIGEST_RE.fullmatch(code_hash):
        raise ValueError(f"bad code digest: {code_hash!r}")
    return f"{_PLAYERS}signin:{code_hash}"


def signin_code_of(pid: str) -> str:
    """The digest of the player's one live sign-in code (a new code kills the old one)."""
    return f"{_PLAYERS}signin_of:{_pid(pid)}"


_ADDRESS_GROUP_RE = re.compile(r"[0-9A-Za-z.:/_-]{1,64}")


def accounts_by_address(group: str, hour: int) -> str:
    """Players created from one client address group (`server.transport.address`) in one
    hour (epoch hours); a lone key, tagged by itself (spread over a cluster's slots)."""
    if not _ADDRESS_GROUP_RE.fullmatch(group):
        group = "unknown"
    return f"{PREFIX}{{lim:{int(hour)}:{group}}}:accounts"


def room_misses(who: str, hour: int) -> str:
    """Wrong room codes tried (`race.join`) by one account or one client address group in
    one hour (`RaceService.join_room`)."""
    if not _ADDRESS_GROUP_RE.fullmatch(who):
        who = "unknown"
    return f"{PREFIX}{{lim:{int(hour)}:{who}}}:roommiss"


def signin_attempts(group: str, hour: int) -> str:
    """Sign-in codes tried (`signin.redeem`) from one client address group in one hour."""
    if not _ADDRESS_GROUP_RE.fullmatch(group):
        group = "unknown"
    return f"{PREFIX}{{lim:{int(hour)}:{group}}}:signin"


def signin_named_attempts(group: str, hour: int) -> str:
    """Sign-in codes tried naming an account (`signin.redeem` with ``name``) from one client
    address group in one hour: a limit of their own, apart from the nameless tries."""
    if not _ADDRESS_GROUP_RE.fullmatch(group):
        group = "unknown"
    return f"{PREFIX}{{lim:{int(hour)}:{group}}}:signin_named"


# -- daily boards and games ---------------------------------------------------------------


def _tier(tier: str) -> str:
    if tier not in TIER_NAMES:
        raise ValueError(f"bad tier: {tier!r}")
    return tier


def daily_tag(variant: str, date: dt.date, tier: str | None = None) -> str:
    """Hash tag of one day's board, its outbox and its deal (not of its games)."""
    if tier is not None and tier != DAILY_TIER:  # a tier's own board
        return f"{{t:{_tier(tier)}:{_variant(variant)}:{date.isoformat()}}}"
    return f"{{d:{_variant(variant)}:{date.isoformat()}}}"


def daily_game_tag(variant: str, date: dt.date, pid: str) -> str:
    """Hash tag of one daily game's record and move log (one slot per game, see above)."""
    return f"{{d:{_variant(variant)}:{date.isoformat()}:{_pid(pid)}}}"


def daily_board(variant: str, date: dt.date, tier: str | None = None) -> str:
    return f"{PREFIX}{daily_tag(variant, date, tier)}:board"


def daily_members(variant: str, date: dt.date, tier: str | None = None) -> str:
    return f"{PREFIX}{daily_tag(variant, date, tier)}:members"


def daily_entries(variant: str, date: dt.date, tier: str | None = None) -> str:
    return f"{PREFIX}{daily_tag(variant, date, tier)}:entries"


def daily_outbox(variant: str, date: dt.date, tier: str | None = None) -> str:
    """The board's finishes whose entry may not be written yet (see `server.boards.leaderboard`)."""
    return f"{PREFIX}{daily_tag(variant, date, tier)}:outbox"


def daily_started(variant: str, date: dt.date) -> str:
    """The day's games not yet seen settled by the rollover sweep (`server.games.rollover`)."""
    return f"{PREFIX}{daily_tag(variant, date)}:started"


def daily_closed(variant: str, date: dt.date) -> str:
    """Set once no game of the day can change any more: its seeds and exports are public."""
    return f"{PREFIX}{daily_tag(variant, date)}:closed"


def daily_game(variant: str, date: dt.date, pid: str) -> str:
    return f"{PREFIX}{daily_game_tag(variant, date, pid)}:g"


def daily_log(variant: str, date: dt.date, pid: str) -> str:
    return f"{PREFIX}{daily_game_tag(variant, date, pid)}:log"


def daily_times(variant: str, date: dt.date, pid: str) -> str:
    return f"{PREFIX}{daily_game_tag(variant, date, pid)}:times"


def daily_deal(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:deal"


def daily_deal_lock(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:deal-lock"


def daily_tiers(variant: str, date: dt.date) -> str:
    """The day's tier deals (JSON: each tier's seed and par, or its absence; secret)."""
    return f"{PREFIX}{daily_tag(variant, date)}:tiers"


def daily_tiers_lock(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:tiers-lock"


def daily_catchup(variant: str, date: dt.date) -> str:
    """The day's catch-up deals (JSON: each of the four tiers' seed and par, or its absence),
    apart from the day's own deals: secret until the day's month is closed."""
    return f"{PREFIX}{daily_tag(variant, date)}:catchup"


def daily_catchup_lock(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{daily_tag(variant, date)}:catchup-lock"


def valid_race_id(race_id: str) -> bool:
    return isinstance(race_id, str) and _RACE_RE.fullmatch(race_id) is not None


def _race_id(race_id: str) -> str:
    if not valid_race_id(race_id):
        raise ValueError(f"bad race id: {race_id!r}")
    return race_id


def new_race_id(now_ms: int) -> str:
    """A fresh race id: ``YYYYMMDD-<12 hex digits>`` (UTC creation date, random part)."""
    day = dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC).strftime("%Y%m%d")
    return f"{day}-{secrets.token_hex(6)}"


def race_date(race_id: str) -> dt.date:
    """The UTC day a race was created (the day its win counts on the wins board)."""
    return dt.datetime.strptime(_race_id(race_id)[:8], "%Y%m%d").date()


def race_tag(race_id: str) -> str:
    """Hash tag for all keys of one race."""
    return f"{{r:{_race_id(race_id)}}}"


# -- game ids -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DailyGameKeys:
    """A parsed daily game id with every key its scripts touch: the daily game, a ranked tier
    game (``tier`` set) or a catch-up game (``catchup``: its board keys are never written)."""

    game_id: str
    variant: str
    date: dt.date
    player_id: str
    tier: str | None = None
    catchup: bool = False
    #: The game's and its board's tags, made (and their parts checked) on first use: a
    #: finish builds a dozen keys of one game (issue #30).
    _game_tag: str | None = field(default=None, init=False, repr=False, compare=False)
    _board_tag: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def _tag(self) -> str:
        tag = self._game_tag
        if tag is None:
            tag = self._make_tag()
            object.__setattr__(self, "_game_tag", tag)
        return tag

    def _make_tag(self) -> str:
        if self.catchup:
            scope = f"c:{self.tier}"
        elif self.tier is not None and self.tier != DAILY_TIER:
            scope = f"t:{self.tier}"
        else:
            return daily_game_tag(self.variant, self.date, self.player_id)
        return f"{{{scope}:{self.variant}:{self.date.isoformat()}:{self.player_id}}}"

    @property
    def game(self) -> str:
        return f"{PREFIX}{self._tag}:g"

    @property
    def log(self) -> str:
        return f"{PREFIX}{self._tag}:log"

    @property
    def times(self) -> str:
        """The server-timed intervals of the game's moves (same slot as its log)."""
        return f"{PREFIX}{self._tag}:times"

    @property
    def board_tier(self) -> str | None:
        """The tier whose board the game is ranked on (None: the daily board)."""
        return None if self.tier == DAILY_TIER else self.tier

    @property
    def _board(self) -> str:
        """The board's tag (`daily_tag`), under the prefix: its keys are this plus a name
        (`daily_board`, `daily_members`, `daily_entries`, `daily_outbox`)."""
        tag = self._board_tag
        if tag is None:
            tag = f"{PREFIX}{daily_tag(self.variant, self.date, self.board_tier)}"
            object.__setattr__(self, "_board_tag", tag)
        return tag

    @property
    def board(self) -> str:
        return f"{self._board}:board"

    @property
    def members(self) -> str:
        return f"{self._board}:members"

    @property
    def entries(self) -> str:
        return f"{self._board}:entries"

    @property
    def outbox(self) -> str:
        return f"{self._board}:outbox"

    @property
    def end_ms(self) -> int:
        """When the game stops taking writes: its UTC day's end, or for a catch-up game the
        end of its day's month (catch-up counts for that month only)."""
        start = (self.date - dt.date(1970, 1, 1)).days * 86_400_000
        if not self.catchup:
            return start + 86_400_000
        first = month_after(self.date)
        return (first - dt.date(1970, 1, 1)).days * 86_400_000


def month_after(date: dt.date) -> dt.date:
    """The first day of the month after ``date``'s."""
    return dt.date(date.year + date.month // 12, date.month % 12 + 1, 1)


def daily_game_id(variant: str, date: dt.date, pid: str) -> str:
    return f"d.{_variant(variant)}.{date.isoformat()}.{_pid(pid)}"


@dataclass(frozen=True, slots=True)
class FreeGameKeys:
    """A parsed free game id (protocol 7: unranked, on no board): its own tag."""

    game_id: str
    free_id: str
    date: dt.date
    player_id: str

    def _key(self, name: str) -> str:
        return f"{PREFIX}{{f:{self.free_id}}}:{name}"

    @property
    def game(self) -> str:
        return self._key("g")

    @property
    def log(self) -> str:
        return self._key("log")

    @property
    def times(self) -> str:
        return self._key("times")


def signin_attempts_of(pid: str, hour: int) -> str:
    """Sign-in codes tried naming one account (`signin.redeem` with ``name``) in one hour."""
    return f"{PREFIX}{{lim:{int(hour)}:p:{_pid(pid)}}}:signin"


def signin_tries_used_of(pid: str, hour: int) -> str:
    """Set once an hour when the account's named sign-in tries are used up: its live code is
    voided and its devices told then only, not at every later refused try."""
    return f"{PREFIX}{{lim:{int(hour)}:p:{_pid(pid)}}}:signin_used"


def free_hints(pid: str, hour: int) -> str:
    """Hints in free games the player asked for in one hour, for their per-hour limit."""
    return f"{PREFIX}{{lim:{int(hour)}:p:{_pid(pid)}}}:fhint"


def hint_solver_ms(pid: str, hour: int) -> str:
    """Solver time (ms) the player's hints took in one hour, for its per-hour budget."""
    return f"{PREFIX}{{lim:{int(hour)}:p:{_pid(pid)}}}:hintms"


def free_game_id(now_ms: int, pid: str) -> str:
    """A fresh free game's id: ``f.<YYYYMMDD-random>.<pid>`` (its UTC creation date)."""
    return f"f.{new_race_id(now_ms)}.{_pid(pid)}"


def free_started(pid: str, hour: int) -> str:
    """Free games the player started in one hour (epoch hours), for their per-hour limit."""
    return f"{PREFIX}{{lim:{int(hour)}:p:{_pid(pid)}}}:free"


#: Every kind of parsed game id.
GameKeys: TypeAlias = "DailyGameKeys | RaceGameKeys | FreeGameKeys"


def tier_game_id(variant: str, date: dt.date, pid: str, tier: str, *, catchup: bool = False) -> str:
    """The id of a player's game of one tier of a day: the daily game for the ranked medium
    tier, ``t.`` for another ranked tier, ``c.`` for a catch-up game."""
    if catchup:
        return f"c.{_tier(tier)}.{_variant(variant)}.{date.isoformat()}.{_pid(pid)}"
    if tier == DAILY_TIER:
        return daily_game_id(variant, date, pid)
    return f"t.{_tier(tier)}.{_variant(variant)}.{date.isoformat()}.{_pid(pid)}"


def parse_game_id(game_id: str) -> GameKeys:
    """Strictly parse a client-supplied game id; anything malformed is ``NotFound``."""
    if not isinstance(game_id, str):
        raise NotFound("no such game")
    # Each kind of id has its own first letter: one pattern tried, not three in turn.
    f = _FREE_GAME_RE.fullmatch(game_id) if game_id.startswith("f.") else None
    if f is not None:
        free_id, day, pid = f.groups()
        try:
            date = dt.datetime.strptime(day, "%Y%m%d").date()
        except ValueError:
            raise NotFound("no such game") from None
        return FreeGameKeys(game_id, free_id, date, pid)
    r = _RACE_GAME_RE.fullmatch(game_id) if game_id.startswith("r.") else None
    if r is not None:
        race_id, day, pid = r.groups()  # day: the race id's date part
        try:
            date = dt.datetime.strptime(day, "%Y%m%d").date()
        except ValueError:
            raise NotFound("no such game") from None
        return RaceGameKeys(game_id, race_id, date, pid)
    m = _GAME_ID_RE.fullmatch(game_id)
    if m is None:
        raise NotFound("no such game")
    scope, tier, variant, date_s, pid = m.groups()
    if scope == "t" and tier == DAILY_TIER:
        raise NotFound("no such game")  # the ranked medium tier is the daily game
    try:
        date = dt.date.fromisoformat(date_s)
    except ValueError:
        raise NotFound("no such game") from None
    if scope is None:
        return DailyGameKeys(game_id, variant, date, pid, DAILY_TIER)
    return DailyGameKeys(game_id, variant, date, pid, tier, catchup=scope == "c")


def race_of_game(game_id: str, player_id: str) -> str | None:
    """The race of ``player_id``'s race game ``game_id``; None for any other id (a daily
    game's at the cost of one prefix test)."""
    if not game_id.startswith("r."):
        return None
    try:
        k = parse_game_id(game_id)
    except NotFound:
        return None
    return k.race_id if isinstance(k, RaceGameKeys) and k.player_id == player_id else None


# -- races --------------------------------------------------------------------------------


def _race(race_id: str, name: str) -> str:
    return f"{PREFIX}{race_tag(race_id)}:{name}"


def race(race_id: str) -> str:
    return _race(race_id, "race")


def race_racers(race_id: str) -> str:
    return _race(race_id, "racers")


def race_order(race_id: str) -> str:
    return _race(race_id, "order")


def race_seen(race_id: str) -> str:
    return _race(race_id, "seen")


def race_progress(race_id: str) -> str:
    return _race(race_id, "progress")


def race_present(race_id: str) -> str:
    """Zset ``<pid>|<process>`` -> until when that process holds a live connection of pid."""
    return _race(race_id, "present")


def race_events(race_id: str) -> str:
    return _race(race_id, "events")


def race_game_id(race_id: str, pid: str) -> str:
    race_tag(race_id)
    return f"r.{race_id}.{_pid(pid)}"


def race_channel(race_id: str) -> str:
    """Pub/sub channel of one race's events (`pubsub.RaceEventPublished`)."""
    return f"{PREFIX}chan:race:{_race_id(race_id)}"


def player_channel(pid: str) -> str:
    """Pub/sub channel of messages to one player's connections (`pubsub.PlayerMatched`)."""
    return f"{PREFIX}chan:player:{_pid(pid)}"


def player_channel_pattern() -> str:
    """The pattern every `player_channel` matches (one subscription per process)."""
    return f"{PREFIX}chan:player:*"


def room_code(code: str) -> str:
    return f"{PREFIX}{{rooms}}:code:{code}"


def rematch_room(race_id: str) -> str:
    """The rematch room asked for after race ``race_id`` (one per race; protocol 7)."""
    return f"{PREFIX}{{rooms}}:rematch:{_race_id(race_id)}"


def rematch_offer(race_id: str) -> str:
    """The offer of rematch room ``race_id``: of, by, invited, expires_at, d:<pid> declines."""
    return f"{PREFIX}{{rooms}}:offer:{_race_id(race_id)}"


def rematch_offers() -> str:
    """Open rematch offers: room id -> when the offer expires (`races.rematch.sweep`)."""
    return f"{PREFIX}{{rooms}}:offers"


def rooms_made(pid: str) -> str:
    """The race ids of the rooms the player created lately, by creation time (the quota)."""
    return f"{PREFIX}{{rooms}}:made:{_pid(pid)}"


def race_queue(variant: str, size: int) -> str:
    return f"{PREFIX}{{q}}:{_variant(variant)}:{int(size)}"


def race_queue_who() -> str:
    return f"{PREFIX}{{q}}:who"


def race_queue_addr() -> str:
    """Queued players' client addresses (the queue keeps one address's accounts apart)."""
    return f"{PREFIX}{{q}}:addr"


def race_inrace() -> str:
    return f"{PREFIX}{{q}}:inrace"


def race_matched() -> str:
    """Players the queue matched, until their race is made: pid -> when (ms)."""
    return f"{PREFIX}{{q}}:matched"


def race_making() -> str:
    """Matches whose race is not made yet: race id -> JSON (queue, players, when). Any
    process makes a race whose maker stopped (`RaceService.repair_matches`)."""
    return f"{PREFIX}{{q}}:making"


def race_turn(pid: str) -> str:
    """Held while one of the player's race requests (queue, create, join, leave) runs."""
    return f"{PREFIX}{{q}}:turn:{_pid(pid)}"


def races_active() -> str:
    return f"{PREFIX}{{ra}}:active"


def races_finished(variant: str) -> str:
    """The variant's latest finished races (the public API lists them)."""
    return f"{PREFIX}{{rf:{_variant(variant)}}}:finished"


def rating_board(variant: str) -> str:
    return f"{PREFIX}{{rt:{_variant(variant)}}}:board"


def rating_stats(variant: str) -> str:
    return f"{PREFIX}{{rt:{_variant(variant)}}}:stats"


def rating_applied(variant: str) -> str:
    return f"{PREFIX}{{rt:{_variant(variant)}}}:applied"


def rating_recent(variant: str, pid: str) -> str:
    return f"{PREFIX}{{rt:{_variant(variant)}}}:recent:{_pid(pid)}"


def rating_pairs(variant: str, date: dt.date) -> str:
    """Pairs of players rated against each other on `date` (UTC): once a day each."""
    return f"{PREFIX}{{rt:{_variant(variant)}}}:pairs:{date.isoformat()}"


def rating_pair_owners(variant: str, date: dt.date) -> str:
    """Each pair of players dealt into one queue race on `date` (the race's UTC day, from its
    id) -> the first such race's id: only that race may rate the pair (`RaceBoards`)."""
    return f"{PREFIX}{{rt:{_variant(variant)}}}:owners:{date.isoformat()}"


def race_wins_board(variant: str, date: dt.date) -> str:
    return f"{PREFIX}{{rw:{_variant(variant)}:{date.isoformat()}}}:board"


def race_wins_applied(variant: str, date: dt.date) -> str:
    """Races whose win that day is counted (each once)."""
    return f"{PREFIX}{{rw:{_variant(variant)}:{date.isoformat()}}}:applied"


# -- fair play (screen and review) ------------------------------------------------------------

_FAIRPLAY = PREFIX + "{fp}:"


def fairplay_held() -> str:
    """Zset of held game ids (awaiting review) -> the game's finish time (ms)."""
    return f"{_FAIRPLAY}held"


def fairplay_held_races(date: dt.date) -> str:
    """The race day's held race result listed on the desk per player: player id -> game id
    (one a player and day, `GameStore._hold_race`)."""
    return f"{_FAIRPLAY}heldraces:{date.isoformat()}"


def fairplay_marked() -> str:
    """Hash of marked (confirmed cheating) players: pid -> mark JSON."""
    return f"{_FAIRPLAY}marked"


def fairplay_audit() -> str:
    """List of review actions (JSON), appended in order."""
    return f"{_FAIRPLAY}audit"


def fairplay_generation() -> str:
    """Counter bumped after every review action that changes a board (mark, unmark, clear):
    files built from the boards before it (open data) are stale."""
    return f"{_FAIRPLAY}gen"


# -- open data (server.api.opendata) ----------------------------------------------------------


def opendata_file(date: dt.date) -> str:
    """Hash of a closed day's open-data file, built once for every process: ``gen`` (the
    `fairplay_generation` it was built at) and ``gz`` (the gzip, base64); it expires with the
    day's boards."""
    return f"{PREFIX}{{od:{date.isoformat()}}}:file"


def opendata_building(date: dt.date) -> str:
    """Held (with a TTL) by the process building `opendata_file` of the day."""
    return f"{PREFIX}{{od:{date.isoformat()}}}:building"


# -- player history (profiles, streaks) ------------------------------------------------------

#: Days of daily results kept per player and variant (older ones are trimmed on write).
HISTORY_KEEP_DAYS = 400


def history_tag(pid: str) -> str:
    """Hash tag of all one player's history keys (single-slot record script)."""
    return f"{{h:{_pid(pid)}}}"


def _history(pid: str, name: str, variant: str) -> str:
    return f"{PREFIX}{history_tag(pid)}:{name}:{_variant(variant)}"


def history_days(pid: str, variant: str) -> str:
    return _history(pid, "days", variant)


def history_won(pid: str, variant: str) -> str:
    return _history(pid, "won", variant)


def history_results(pid: str, variant: str) -> str:
    return _history(pid, "res", variant)


def history_ranks(pid: str, variant: str) -> str:
    return _history(pid, "rank", variant)


def history_stats(pid: str, variant: str) -> str:
    return _history(pid, "stats", variant)


def history_pending(pid: str) -> str:
    return f"{PREFIX}{history_tag(pid)}:pending"


def history_record_keys(
    pid: str, variant: str, crowns_of: dt.date | None = None
) -> tuple[str, ...]:
    """The keys of a history's record script (`server.players.history`), the player id and
    variant checked once: `history_days`, `history_won`, `history_results`,
    `history_ranks`, `history_stats` of the variant, `history_pending`, and with
    ``crowns_of`` (a won day's date) its month's `crowns` and the `crown_months`."""
    base, v = f"{PREFIX}{history_tag(pid)}:", _variant(variant)
    names = (
        f"{base}days:{v}",
        f"{base}won:{v}",
        f"{base}res:{v}",
        f"{base}rank:{v}",
        f"{base}stats:{v}",
        f"{base}pending",
    )
    if crowns_of is None:
        return names
    d = crowns_of
    return (*names, f"{base}crowns:{d.year:04d}-{d.month:02d}", f"{base}months")


def crowns(pid: str, year: int, month: int) -> str:
    """A player's crowns of one month: "<variant>|<date>|<tier>" -> crowns (set once)."""
    return f"{PREFIX}{history_tag(pid)}:crowns:{int(year):04d}-{int(month):02d}"


def calendar_games(pid: str, year: int, month: int) -> str:
    """The tier games a player started in one month, for the calendar's reads
    (`server.games.monthindex`): "<DD>|<variant>|<tier>|<r or c>" (ranked or catch-up), and
    "*" once the games started before the index existed were added."""
    return f"{PREFIX}{history_tag(pid)}:cal:{int(year):04d}-{int(month):02d}"


def crown_months(pid: str) -> str:
    """A player's months with crowns: month number (year * 12 + month - 1) -> crowns."""
    return f"{PREFIX}{history_tag(pid)}:months"


def race_watchers(race_id: str) -> str:
    """Spectators of a race: server process id -> how many watch there."""
    return _race(race_id, "watchers")


def race_watchers_alive(race_id: str) -> str:
    """Until when each process's spectator count of a race counts (ms; its heartbeat moves
    it on): a stopped process's count lapses soon after, and any process drops it."""
    return _race(race_id, "watchers:alive")


@dataclass(frozen=True, slots=True)
class RaceGameKeys:
    """A parsed race game id; the race's own standings play the part of the daily board."""

    game_id: str
    race_id: str
    date: dt.date
    player_id: str

    @property
    def game(self) -> str:
        return _race(self.race_id, f"g:{self.player_id}")

    @property
    def log(self) -> str:
        return _race(self.race_id, f"log:{self.player_id}")

    @property
    def times(self) -> str:
        return _race(self.race_id, f"times:{self.player_id}")

    @property
    def board(self) -> str:
        return _race(self.race_id, "board")

    @property
    def members(self) -> str:
        return _race(self.race_id, "members")

    @property
    def entries(self) -> str:
        return _race(self.race_id, "entries")

    @property
    def outbox(self) -> str:
        """Never written: a race game's finish writes its entry in the same script."""
        return _race(self.race_id, "outbox")
