"""Triple Easthaven's game-over check: is any progress still reachable once the stock is empty?

Progress means a face-down card turns, or the foundations hold more cards than they do now.
`ProgressSearch` decides it exactly by a depth-first search over positions, resumable in slices
(`step`), and stops at the first position from which one move makes progress.

A position is encoded as one ``bytes`` value (no container objects, so the search adds nothing
to the cyclic garbage collector's work): 12 foundation heights, three per suit (C, D, H, S),
sorted within the suit, then the piles sorted and joined by ``0xff``. A pile is a flag byte (1
when face-down cards lie under it, else 0) followed by the codes of its face-up cards, bottom
first (code = suit * 13 + rank - 1, as `Card.code`).

Reductions, each exact (the tests compare with a plain exhaustive search):

* **Stop at the first progress.** A position is a *goal* when one move from it makes progress:
  a foundation play while the foundations hold as many cards as at the start (every play from
  a position with fewer is an ordinary move of the search, since cards that came back from a
  foundation must first be replayed), or a move of the whole face-up part of a pile with
  face-down cards under it (a card exposed is turned). Such a move is never expanded.
* **Canonical keys.** Nothing is dealt any more, so the piles are a multiset (sorted in the
  key); the three foundations of a suit are interchangeable (heights sorted), identical cards
  have the same code, and how many face-down cards a pile holds is irrelevant beyond "some"
  (turning any of them is progress; none ever turns inside the search).
* **Empty piles are interchangeable**: only the first is tried as a destination; and a pile
  without face-down cards never moves whole to an empty pile (the same multiset again).
* **Frozen cards** (`_freeze`, once, on the start, when `PROBE_NODES` positions searched as
  they are found no progress): cards the relaxation `_relax` proves never
  move (at or below a pile's `low`) are replaced by one anchor byte, the slot of the top one
  (flag 2). They never move, play or turn anything, so all they do is host cards of that slot;
  piles on identical anchors (the same slot: 9H and 9D alike) become interchangeable and the
  sorted key merges which of them holds which run. Sound because every real move sequence
  without progress stays inside the relaxation's facts (see `_relax_core`).
* **Host counting** (`_relax`, `_resources`): cards dealt on cards they do not fit never come
  back once gone, so those that left are all away at once, each on a host of its own, an
  empty pile or a foundation; when the relaxation's facts need more, it is split into cases.

Worst case: the search visits each canonical position at most once, and only positions with
the same face-up/foundation cards, the same piles' bottom cards above face-down cards (such a
card cannot move without progress) and no more foundation cards than at the start, so it is
bounded by the number of arrangements of those cards. That number is small for positions from
play (measured: see the tests and the report of issue #11) but can grow exponentially in
crafted positions, hence `step(max_nodes)`, which bounds the work of one call.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final

from ..cards import SUITS

_SEP_BYTES: Final = b"\xff"
FOUND_LEN: Final = 12

_RANK0 = tuple(c % 13 for c in range(52))  # rank - 1
_SUIT = tuple(c // 13 for c in range(52))
_RED = tuple(SUITS[c // 13] in "DH" for c in range(52))
# A card builds on another when its fit equals the other's slot. Codes from ANCHOR on stand for
# frozen cards (see `_freeze`): they only host, by slot (ANCHOR + slot), and never move.
ANCHOR: Final = 64
_NO_FIT: Final = 255
FIT: Final = tuple([(c % 13 + 1) * 2 + _RED[c] for c in range(52)] + [_NO_FIT] * 204)
SLOT: Final = tuple(
    [(c % 13) * 2 + (not _RED[c]) for c in range(52)]
    + [_NO_FIT] * 12
    + list(range(26))
    + [_NO_FIT] * 166
)


def encode(piles: list[tuple[bool, list[int]]], heights: list[int]) -> bytes:
    """The canonical key of a position: piles as (face-down cards under it, face-up codes),
    foundation heights in the engine's order (three per suit, C D H S)."""
    found = bytearray()
    for s in range(4):
        found += bytes(sorted(heights[3 * s : 3 * s + 3]))
    parts = sorted(bytes([1 if down else 0, *up]) for down, up in piles)
    return bytes(found) + _SEP_BYTES.join(parts)


def _plays(found: bytes, c: int) -> int:
    """Index in `found` of a foundation that takes card `c`, or -1."""
    if c >= ANCHOR:
        return -1
    base = 3 * _SUIT[c]
    r = _RANK0[c]
    if found[base] == r:
        return base
    if found[base + 1] == r:
        return base + 1
    if found[base + 2] == r:
        return base + 2
    return -1


def _set_height(found: bytes, i: int, h: int) -> bytes:
    """`found` with foundation `i` at height `h`, its suit's heights re-sorted."""
    base = i - i % 3
    trio = [found[base], found[base + 1], found[base + 2]]
    trio[i - base] = h
    trio.sort()
    return found[:base] + bytes(trio) + found[base + 3 :]


class ProgressSearch:
    """Resumable search for progress from one position (see the module docstring).

    `step(max_nodes)` expands at most `max_nodes` positions and returns True when progress is
    reachable, False when it is not (every reachable position was seen), None when undecided.
    """

    __slots__ = ("_goal_total", "_low", "_queue", "_seen", "_start", "expanded", "verdict")

    def __init__(self, start: bytes) -> None:
        self._goal_total = sum(start[:FOUND_LEN])
        self._start: bytes | None = start  # None once relaxed and frozen
        self._seen: set[bytes] = {start}
        # One FIFO per estimate, made when first used: most searches end within a few
        # positions, and 64 deques cost more than those positions.
        self._queue: list[deque[bytes] | None] = [None] * _BUCKETS
        self._queue[0] = deque((start,))
        self._low = 0
        self.expanded = 0
        self.verdict: bool | None = None

    @property
    def seen(self) -> int:
        return len(self._seen)

    def step(self, max_nodes: int) -> bool | None:
        if self.verdict is not None:
            return self.verdict
        queue, seen = self._queue, self._seen
        add = seen.add
        goal_total = self._goal_total
        low = self._low
        for _ in range(max_nodes):
            while low < _BUCKETS and not queue[low]:
                low += 1
            if low == _BUCKETS:
                return self._decide(False)
            first = queue[low]
            assert first is not None
            key = first.popleft()
            self.expanded += 1
            children = _children(key, goal_total)
            if children is None:
                return self._decide(True)
            if self.expanded > PROBE_NODES and self._start is not None:
                # The probe found no progress: relax and freeze the start, search from there.
                start, self._start = self._start, None
                may, piles, lows = _relax(start, goal_total)
                if not may:
                    return self._decide(False)  # the relaxation proves it, no search needed
                key = _freeze(start[:FOUND_LEN], piles, lows)
                seen.clear()
                for q in queue:
                    if q is not None:
                        q.clear()
                low = 0
                add(key)
                children = _children(key, goal_total)
                assert children is not None
            for child in children:
                if child not in seen:
                    add(child)
                    h = _estimate(child, goal_total)
                    q = queue[h]
                    if q is None:
                        q = queue[h] = deque()
                    q.append(child)
                    if h < low:
                        low = h
        self._low = low
        return None

    def _decide(self, verdict: bool) -> bool:
        self.verdict = verdict
        self._seen = set()
        self._queue = []
        return verdict

    def run(self) -> bool:
        """Search to the end."""
        verdict = self.step(1 << 62)
        assert verdict is not None
        return verdict


_BUCKETS: Final = 64
#: Positions searched as they are before the relaxation is computed: progress from a live
#: position is nearly always a few moves away (in play: 1 position at the median, 16 at p95),
#: found sooner than the relaxation (~0.3-2 ms) is computed; dead ones then pay it anyway.
#: Measured on 365 searches from the benchmark's games: 0 (relax first) 103 ms in all, 4: 44,
#: 8: 39, 16: 46, 48: 69.
PROBE_NODES: Final = 8


_PLAYABLE: dict[bytes, frozenset[int]] = {}


def _playable(found: bytes) -> frozenset[int]:
    """The card codes the foundations `found` take (one per foundation below a King),
    remembered: a search meets few distinct foundation states."""
    got = _PLAYABLE.get(found)
    if got is None:
        if len(_PLAYABLE) >= 4096:
            _PLAYABLE.clear()
        got = _PLAYABLE[found] = frozenset((f // 3) * 13 + h for f, h in enumerate(found) if h < 13)
    return got


#: Per-pile parts of `_estimate`, by foundation heights + pile bytes: a child differs from its
#: parent in one or two piles, so most piles were measured before.
_PILE_ESTIMATE: dict[bytes, int] = {}


def _estimate(key: bytes, goal_total: int) -> int:
    """Search order only (any order is exact): how far `key` looks from progress, 0 to 63.

    Per pile: for one with face-down cards, the cards above its run at the bottom; for any, how
    deep its first card a foundation takes lies. The least over the piles (at most 40), plus two
    per foundation card missing against the start."""
    found = key[:FOUND_LEN]
    cache = _PILE_ESTIMATE
    best = 40
    playable: frozenset[int] | None = None
    for p in key[FOUND_LEN:].split(_SEP_BYTES):
        if len(p) <= 1:
            continue
        k = found + p
        v = cache.get(k)
        if v is None:
            if playable is None:
                playable = _playable(found)
            m = len(p) - 1
            v = 40
            if p[0] == 1:
                b = 1
                while b < m and FIT[p[b + 1]] == SLOT[p[b]]:
                    b += 1
                v = m - b
            d = 0
            while d < m and d < v:
                if p[m - d] in playable:
                    v = d
                    break
                d += 1
            if len(cache) >= 65_536:
                cache.clear()
            cache[k] = v
        if v < best:
            best = v
            if v == 0:
                break  # nothing scores lower
    return min(best + 2 * (goal_total - sum(found)), _BUCKETS - 1)


def _freeze(found: bytes, piles: list[bytes], lows: list[int]) -> bytes:
    """The key with each pile's cards that never move (`_relax`: at or below its `low`) replaced
    by one anchor: flag 2, then ANCHOR + the slot of the top one, which is all that matters of
    them (they host cards by that slot; they never move, play or uncover anything)."""
    parts = []
    for p, e in zip(piles, lows, strict=True):
        if e >= 0:
            parts.append(bytes((2, ANCHOR + SLOT[p[e + 1]])) + p[e + 2 :])
        else:
            parts.append(p)
    parts.sort()
    return found + _SEP_BYTES.join(parts)


def _children(key: bytes, goal_total: int) -> list[bytes] | None:
    """The keys one move away from `key`, or None when `key` is a goal (one move from progress).

    The rules, in the order their children are listed: a goal when a top plays while the
    foundations hold as many cards as at the start (`_tops_by_slot`) or a whole face-up part
    can leave its face-down cards (`_runs_or_goal`); else runs move between piles and tops
    play (`_pile_children`), and foundation tops come back (`_return_children`)."""
    found = key[:FOUND_LEN]
    piles = key[FOUND_LEN:].split(_SEP_BYTES)
    scan = _tops_by_slot(found, piles, sum(found) >= goal_total)
    if scan is None:
        return None
    slots, empty = scan
    runs = _runs_or_goal(found, piles, slots, empty)
    if runs is None:
        return None
    out: list[bytes] = []
    for i in range(len(piles)):
        _pile_children(out, found, piles, i, runs[i], slots, empty)
    _return_children(out, found, piles, slots, empty)
    return out


def _tops_by_slot(
    found: bytes, piles: list[bytes], at_goal_total: bool
) -> tuple[dict[int, list[int]], int] | None:
    """The piles by the slot of their top card, and the first empty pile (-1: none); None
    when a top plays and the foundations hold as many cards as at the start (a goal)."""
    slots: dict[int, list[int]] = {}
    empty = -1
    playable = _playable(found)
    for i, p in enumerate(piles):
        if len(p) > 1:
            top = p[-1]
            if at_goal_total and top in playable:
                return None
            s = SLOT[top]
            if s in slots:
                slots[s].append(i)
            else:
                slots[s] = [i]
        elif p[0] == 0 and empty < 0:
            empty = i
    return slots, empty


def _run_length(p: bytes) -> int:
    """The cards of the run on top of pile `p` (at least 1, also for an empty pile)."""
    m = len(p) - 1
    k = 1
    while k < m and FIT[p[-k]] == SLOT[p[-k - 1]]:
        k += 1
    return k


def _runs_or_goal(
    found: bytes, piles: list[bytes], slots: dict[int, list[int]], empty: int
) -> list[int] | None:
    """Each pile's top run length, or None when a pile's whole face-up part, one run over
    face-down cards, can move away (a goal: a card turns)."""
    runs = []
    for i, p in enumerate(piles):
        m = len(p) - 1
        k = _run_length(p)
        runs.append(k)
        if p[0] == 1 and m > 0 and k == m and _whole_run_leaves(found, p, i, slots, empty):
            return None
    return runs


def _whole_run_leaves(
    found: bytes, p: bytes, i: int, slots: dict[int, list[int]], empty: int
) -> bool:
    """Pile `i`'s whole face-up part (one run) has somewhere to go: an empty pile, another
    pile's top of its slot, or a foundation (a single card)."""
    base = p[1]
    if empty >= 0 or (len(p) == 2 and _plays(found, base) >= 0):
        return True
    return any(j != i for j in slots.get(FIT[base], ()))


def _pile_children(
    out: list[bytes],
    found: bytes,
    piles: list[bytes],
    i: int,
    run: int,
    slots: dict[int, list[int]],
    empty: int,
) -> None:
    """Append the moves from pile `i`: each part of its top run onto a top it builds on or
    to the first empty pile, and its top card to a foundation (below the start's total)."""
    p = piles[i]
    m = len(p) - 1
    if m <= 0:
        return
    flag = p[0]
    for k in range(1, run + 1):
        if flag and k == m:
            break  # a goal, handled by `_runs_or_goal`
        moving = p[-k:]
        rest = p[:-k]
        for j in slots.get(FIT[p[-k]], ()):
            if j != i:
                out.append(_moved(found, piles, i, rest, j, piles[j] + moving))
        if empty >= 0 and (flag or k < m):
            out.append(_moved(found, piles, i, rest, empty, b"\x00" + moving))
    f = _plays(found, p[-1])
    if f >= 0:  # fewer foundation cards than at the start (else a goal)
        new = list(piles)
        new[i] = p[:-1]
        new.sort()
        out.append(_set_height(found, f, found[f] + 1) + _SEP_BYTES.join(new))


def _moved(found: bytes, piles: list[bytes], i: int, rest: bytes, j: int, dest: bytes) -> bytes:
    """The key after cards left pile `i` (leaving `rest`) for pile `j` (now `dest`)."""
    new = list(piles)
    new[i] = rest
    new[j] = dest
    new.sort()
    return found + _SEP_BYTES.join(new)


def _return_children(
    out: list[bytes],
    found: bytes,
    piles: list[bytes],
    slots: dict[int, list[int]],
    empty: int,
) -> None:
    """Append the moves of a foundation's top card back onto a pile top it builds on or to
    the first empty pile (one foundation per distinct card)."""
    for f in range(FOUND_LEN):
        h = found[f]
        if h == 0 or (f % 3 and found[f - 1] == h):
            continue  # empty, or the same card as on the previous foundation of the suit
        c = (f // 3) * 13 + h - 1
        nf = _set_height(found, f, h - 1)
        dests = list(slots.get(FIT[c], ()))
        if empty >= 0:
            dests.append(empty)
        for j in dests:
            new = list(piles)
            new[j] = piles[j] + bytes((c,))
            new.sort()
            out.append(nf + _SEP_BYTES.join(new))


def may_progress(key: bytes, goal_total: int) -> bool:
    """An over-approximation: False only when no sequence of moves from `key` makes progress
    (see `_relax`)."""
    return _relax(key, goal_total)[0]


def _relax(key: bytes, goal_total: int) -> tuple[bool, list[bytes], list[int]]:
    """The relaxation `_relax_core` refined by host counting (`_resources`): False first only
    when no sequence of moves from `key` makes progress.

    Returns (progress allowed, the piles with cards or none face down, their `low`; -1 for a
    pile that can be emptied, or whose face-down cards can be exposed). The lows are those of
    the plain relaxation (valid for every move sequence without progress), which `_freeze` uses.

    Case split: a *break* is a face-up card on a face-up card it does not fit (it was dealt
    so). Once it leaves it never comes back (nothing is ever put on a card it does not fit), so
    the breaks that have left only grow, and at any moment they are all away at once. A branch
    assumes a set X of breaks never leaves (before the progress move) and runs the relaxation
    with those moves removed; if its facts violate the counting of `_resources` (all the
    breaks it lets leave cannot be away at once), every move sequence of the branch keeps at
    least one of the breaks named by `_resources` in place, so the branch is replaced by one
    branch per named break, adding it to X. Every move sequence without progress lies in some
    leaf, so progress is reachable only when some leaf's relaxation allows it. The split stops
    at `_BRANCH_LIMIT` relaxations (then: progress allowed, as without it).
    """
    found = key[:FOUND_LEN]
    piles = [p for p in key[FOUND_LEN:].split(_SEP_BYTES) if len(p) > 1 or p[0] == 0]
    may, low, tops = _relax_core(found, piles, goal_total, frozenset())
    root_low = low
    todo: list[frozenset[tuple[int, int]]] = [frozenset()]
    done: set[frozenset[tuple[int, int]]] = {frozenset()}
    runs = 0
    while todo:
        forbid = todo.pop()
        if runs:
            may, low, tops = _relax_core(found, piles, goal_total, forbid)
        runs += 1
        if not may:
            continue  # a dead leaf: none of its move sequences makes progress
        named = _resources(found, piles, low, tops)
        if not named:
            return True, piles, root_low
        for b in named:
            child = forbid | {b}
            if child not in done:
                done.add(child)
                todo.append(child)
        if len(done) > _BRANCH_LIMIT:
            return True, piles, root_low
    return False, piles, root_low


_BRANCH_LIMIT: Final = 64


def _resources(
    found: bytes, piles: list[bytes], low: list[int], tops: int
) -> list[tuple[int, int]]:
    """Host counting on the facts of one relaxation (valid for every move sequence without
    progress of its branch): the breaks (pile, index) to split on when its facts cannot all
    hold at once, else [].

    Take the position P just before the progress move, and suppose every break above its
    pile's `low` has left. The *free* cards are the cards above `low` (but not a bottom card
    over face-down cards, which moves only in the progress move itself) and the foundation
    cards now. A free card in the tableau in P lies on a card it fits (its host) or at the
    bottom of an empty pile, since moves create no other contact (the only other contacts are
    breaks in place and cards on face-down ones). A card holds at most one card; a pile holds
    one bottom card; cards that are not free stay in place: of them only the one at `low`
    (and anchors) and a bottom card over face-down cards can host, the others are covered for
    good. Piles that can be empty in P are
    those without face-down cards and `low` -1.

    Per card type c, let K be its free copies and R the foundations of its suit that can be
    at or above its rank in P (at or above it now, or every card up to it can be a top): at
    least K - R and at most K free copies of c are in the tableau in P. Cards of rank r host
    only cards of rank r - 1 of the other colour, so the types form two chains (rank parity
    plus colour); along a chain, y_r (free cards of rank r in the tableau in P) must leave at
    most (y_{r-1} - y_r - fixed_r)^+ cards of rank r - 1 on empty piles (fixed_r: the cards at
    `low` of rank r that can host them), and every King is on an empty pile. A dynamic
    program finds the least number of empty piles this needs over all admissible y; more
    than the piles that can be empty means the breaks cannot all be away in P. The lower
    bounds only grow with the set of breaks that have left (the upper bounds are taken for all
    breaks away, which only loosens), so one of the breaks of the types with K > R on a
    chain that needs empty piles never left: those are named. The breaks of the other types
    may be in place in P, hosting without a host: they count as hosts that need none (and
    also as free cards; more hosts and a looser bound, never a wrong one).
    """
    count, fixed, brk, empty = _free_cards(piles, low)
    lo = _lower_bounds(found, count, tops)
    for c in range(52):
        if not lo[c]:
            fixed[SLOT[c]] += brk[c]  # breaks not named below, which may be in place
    need, bad_chains = _empty_piles_needed(lo, count, fixed)
    if need <= empty:
        return []
    return _named_breaks(piles, low, lo, bad_chains)


def _free_cards(piles: list[bytes], low: list[int]) -> tuple[list[int], list[int], list[int], int]:
    """Per card type the free copies in the tableau and the breaks among them; per slot the
    hosts that need no host (cards at `low`, anchors, bottom cards over face-down cards);
    and the piles that can be empty."""
    count = [0] * 52  # per card type: free copies
    fixed = [0] * 32  # per slot: hosts that need no host
    brk = [0] * 52  # per card type: breaks above `low`
    empty = 0
    for n, p in enumerate(piles):
        e = low[n]
        if e < 0 and p[0] == 0:
            empty += 1
        if e >= 0:
            fixed[SLOT[p[e + 1]]] += 1
        for i in range(e + 1, len(p) - 1):
            c = p[i + 1]
            if i == 0 and p[0]:
                fixed[SLOT[c]] += 1  # in place in P, over the face-down cards: it hosts
                continue
            if c < ANCHOR:
                count[c] += 1
                if i > 0 and FIT[c] != SLOT[p[i]]:
                    brk[c] += 1
    return count, fixed, brk, empty


def _lower_bounds(found: bytes, count: list[int], tops: int) -> list[int]:
    """Per card type, the least number of its free copies in the tableau in P: K - R (see
    `_resources`). Adds the foundation cards to `count` (free copies too)."""
    lo = [0] * 52
    for s in range(4):
        trio = found[3 * s : 3 * s + 3]
        for r in range(13):  # r = rank - 1
            c = s * 13 + r
            count[c] += sum(1 for h in trio if h > r)
            if count[c]:
                lo[c] = max(0, count[c] - _room(trio, tops, s, r))
    return lo


def _room(trio: bytes, tops: int, s: int, r: int) -> int:
    """The foundations of suit `s` that can be at or above rank r + 1 in P."""
    room = 0
    for h in trio:
        if h > r or all(tops >> (s * 13 + j) & 1 for j in range(h, r + 1)):
            room += 1
    return room


def _empty_piles_needed(lo: list[int], count: list[int], fixed: list[int]) -> tuple[int, int]:
    """The least number of empty piles the two chains need, and the bits of the chains that
    need any. A slot v = 2 * (rank - 1) + black; rank r of colour red hosts rank r - 1 black."""
    need = 0
    bad_chains = 0
    for chain in range(2):
        least = _chain_need(lo, count, fixed, chain)
        if least:
            need += least
            bad_chains |= 1 << chain
    return need, bad_chains


def _chain_need(lo: list[int], count: list[int], fixed: list[int], chain: int) -> int:
    """The dynamic program of `_resources` along one chain: the least empty piles over all
    admissible numbers y_r of free cards of each rank in the tableau."""
    best: dict[int, int] = {0: 0}  # y of the previous rank -> least empty piles so far
    for r in range(13):
        # cards of rank r + 1 on this chain: colour red when (r + red) % 2 == chain
        red = (r + chain) % 2
        suits = (1, 2) if red else (0, 3)
        ylo = sum(lo[s * 13 + r] for s in suits)
        yhi = sum(count[s * 13 + r] for s in suits)
        fx = fixed[2 * r + (not red)]
        nxt: dict[int, int] = {}
        for y in range(ylo, yhi + 1):
            nxt[y] = min(v + max(0, yp - y - fx) for yp, v in best.items())
        best = nxt
    return min(v + y for y, v in best.items())  # Kings: empty piles only


def _named_breaks(
    piles: list[bytes], low: list[int], lo: list[int], bad_chains: int
) -> list[tuple[int, int]]:
    """The breaks (pile, index) above `low` of the types with K > R on a chain that needs
    empty piles: one of them never left."""
    named = []
    for n, p in enumerate(piles):
        for i in range(max(low[n], 0) + 1, len(p) - 1):
            c = p[i + 1]
            if (
                c < ANCHOR
                and FIT[c] != SLOT[p[i]]
                and lo[c]
                and bad_chains >> ((_RANK0[c] + _RED[c]) % 2) & 1
            ):
                named.append((n, i))
    return named


def _relax_core(
    found: bytes, piles: list[bytes], goal_total: int, forbid: frozenset[tuple[int, int]]
) -> tuple[bool, list[int], int]:
    """A monotone ("delete-relaxed") fixpoint over facts that, once possible, are assumed to stay
    possible: which card types can be a pile top, whether a pile can be empty, which foundation
    heights each suit can reach, and how deep each pile can be uncovered (`low`: the index in
    the pile's cards of the lowest one that can become its top). Every real move sequence
    without progress keeps inside these facts (each real move is one of the relaxed moves, from
    facts already derived), so: cards at or below `low` never move; and when the facts allow no
    progress, none is reachable. Progress is allowed when a pile with face-down cards can be
    uncovered below its bottom face-up card, or when the foundation cards plus every tableau card
    that can be uncovered could form foundations holding more than `goal_total` cards (a
    counting bound per suit). The breaks in `forbid` (pile, index) never leave (a case of
    `_relax`): the facts then cover the move sequences in which they stay.

    Returns (progress allowed, `low` per pile, the bits of the card types that can be tops).
    """
    facts = _initial_facts(found, piles)
    while facts.changed:
        facts.changed = False
        _foundation_rule(facts)
        _uncover_rule(facts, piles, forbid)
        _unit_top_rule(facts, piles, forbid)
    if facts.exposed:
        return True, facts.low, facts.tops
    return _counting_bound(found, piles, facts) > goal_total, facts.low, facts.tops


@dataclass
class Facts:
    """The facts of `_relax_core`, monotone: once a fact holds it is assumed to keep holding."""

    #: Some pile can be empty.
    empty: bool
    #: A pile's face-down cards can be exposed (progress).
    exposed: bool
    #: Per pile, the index (in its cards) of the lowest card that can become its top.
    low: list[int]
    #: A bit per card code that can be a pile top.
    tops: int
    #: A bit per slot value of those tops.
    slots: int
    #: Per suit, a bit per foundation height it can reach.
    heights: list[int]
    #: A fact was added in this round (the rules run until a round adds none).
    changed: bool = True

    def add_top(self, c: int) -> None:
        """Card `c` can be a pile top."""
        if not self.tops >> c & 1:
            self.tops |= 1 << c
            self.slots |= 1 << SLOT[c]
            self.changed = True

    def hosts(self, c: int) -> bool:
        """Card `c` (a unit's head) can move somewhere: an empty pile or a top of its slot."""
        return self.empty or bool(self.slots >> FIT[c] & 1)

    def plays(self, c: int) -> bool:
        """A foundation of `c`'s suit can reach the height `c` plays at."""
        return bool(self.heights[_SUIT[c]] >> _RANK0[c] & 1)


def _initial_facts(found: bytes, piles: list[bytes]) -> Facts:
    """The facts of the position itself: its tops, empty piles and foundation heights."""
    empty = False
    low = []
    tops = 0
    slots = 0
    for p in piles:
        m = len(p) - 1
        if m == 0:
            empty = True
        else:
            tops |= 1 << p[-1]
            slots |= 1 << SLOT[p[-1]]
        low.append(m - 1)
    heights = [0, 0, 0, 0]
    for f in range(FOUND_LEN):
        heights[f // 3] |= 1 << found[f]
    return Facts(empty, False, low, tops, slots, heights)


def _foundation_rule(facts: Facts) -> None:
    """Foundations: a reachable top card comes back to the tableau where it can be hosted,
    and a card that can be a top plays up."""
    for s in range(4):
        bits = facts.heights[s]
        for h in range(13, -1, -1):
            if not bits >> h & 1:
                continue
            if h > 0:  # the top card comes back to the tableau
                c = s * 13 + h - 1
                if facts.hosts(c) and not (bits >> (h - 1) & 1 and facts.tops >> c & 1):
                    bits |= 1 << (h - 1)
                    facts.tops |= 1 << c
                    facts.slots |= 1 << SLOT[c]
                    facts.changed = True
            if h < 13 and facts.tops >> (s * 13 + h) & 1 and not bits >> (h + 1) & 1:
                bits |= 1 << (h + 1)  # a pile top plays up
                facts.changed = True
        facts.heights[s] = bits


def _uncover_rule(facts: Facts, piles: list[bytes], forbid: frozenset[tuple[int, int]]) -> None:
    """Uncovering: the units on top of each pile's `low` leave, top first, when they can be
    hosted (or the top one plays); the card beneath each becomes a top."""
    for n, p in enumerate(piles):
        e = facts.low[n]
        if e < 0:
            continue
        new_low = _uncovered_low(facts, n, p, e, forbid)
        if new_low < e:
            facts.low[n] = new_low
            facts.changed = True
            if new_low < 0:
                if p[0]:
                    facts.exposed = True  # progress; the pile never empties without it
                else:
                    facts.empty = True


def _uncovered_low(
    facts: Facts, n: int, p: bytes, e: int, forbid: frozenset[tuple[int, int]]
) -> int:
    """Pile `n`'s new `low` from `e`: k is the index (in p[1:]) of the head of the unit
    whose top is card e, walking down while the cards build on each other."""
    k = e
    new_low = e
    while k >= 0:
        c = p[k + 1]
        if c >= ANCHOR:
            break
        if k > 0 and FIT[c] != SLOT[p[k]] and (n, k) in forbid:
            break
        if facts.hosts(c) or (k == e and facts.plays(c)):
            new_low = k - 1
            if k > 0:
                facts.add_top(p[k])
        if k == 0 or FIT[c] != SLOT[p[k]]:
            break
        k -= 1
    return new_low


def _unit_top_rule(facts: Facts, piles: list[bytes], forbid: frozenset[tuple[int, int]]) -> None:
    """A card above `low` also becomes a top when the card on it leaves after the two moved
    away together (`_unit_tops`)."""
    for n, p in enumerate(piles):
        e = max(facts.low[n], 0)
        if len(p) - 1 - e >= 2:
            _unit_tops(facts, n, p, e, forbid)


def _unit_tops(facts: Facts, n: int, p: bytes, e: int, forbid: frozenset[tuple[int, int]]) -> None:
    """`up[i]`: card i can become a top: the card on it leaves as the head of a unit of the
    original cards up to a card j that can be a top (with any cards put on j when it was a
    top); cards put on a card later came when it was a top already."""
    m = len(p) - 1
    up = [False] * m
    up[m - 1] = True
    for i in range(m - 2, e - 1, -1):
        y = p[i + 2]
        if FIT[y] != SLOT[p[i + 1]] and (n, i + 1) in forbid:
            continue
        if _leaves_as_head(facts, p, i, y, up):
            up[i] = True
            x = p[i + 1]
            if x < ANCHOR:
                facts.add_top(x)


def _leaves_as_head(facts: Facts, p: bytes, i: int, y: int, up: list[bool]) -> bool:
    """Card `y` (on card i) leaves as the head of a unit up to some card j that can be a top."""
    m = len(p) - 1
    j = i + 1
    while True:
        if up[j] and (facts.hosts(y) or (j == i + 1 and facts.tops >> y & 1 and facts.plays(y))):
            return True
        if j + 1 >= m or FIT[p[j + 2]] != SLOT[p[j + 1]]:
            return False
        j += 1


def _counting_bound(found: bytes, piles: list[bytes], facts: Facts) -> int:
    """The most cards foundations can hold, per suit, from the cards on them now plus every
    tableau card that can be uncovered and whose type can be a top (only a top plays up)."""
    count = [0] * 256
    for n, p in enumerate(piles):
        for c in p[max(facts.low[n], 0) + 1 :]:
            if facts.tops >> c & 1:
                count[c] += 1
    best = 0
    for s in range(4):
        trio = found[3 * s : 3 * s + 3]
        least = 3
        for r in range(1, 14):
            least = min(least, sum(1 for h in trio if h >= r) + count[s * 13 + r - 1])
            if least == 0:
                break
            best += least
    return best
