"""The simulated players' skill levels and what one simulated game gives (shared by the
general player and the players of their own, `tripledeck_player` and `easthaven_player`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from ..game import Game
from ..state import TriPeaksState


@dataclass(frozen=True, slots=True)
class Skill:
    """One simulated player's parameters."""

    name: str
    noise: float  # probability of a random move instead of the best-rated one
    base_s: float  # seconds per decision, at least
    per_bit_s: float  # seconds per bit of choice (log2 of legal moves + 1)

    def think_s(self, options: int) -> float:
        """The modelled time of one decision among `options` legal moves."""
        return self.base_s + self.per_bit_s * math.log2(options + 1)


class Level(Enum):
    """The skill levels used for calibration, weakest first."""

    #: No noise: the deterministic greedy line (a feature of the deal, `features.measure`).
    GREEDY = Skill("greedy", noise=0.0, base_s=1.2, per_bit_s=0.5)
    NOVICE = Skill("novice", noise=0.30, base_s=2.5, per_bit_s=1.2)
    CASUAL = Skill("casual", noise=0.12, base_s=1.8, per_bit_s=0.8)
    SKILLED = Skill("skilled", noise=0.03, base_s=1.2, per_bit_s=0.5)

    @classmethod
    def calibration(cls) -> tuple[Level, ...]:
        """The noisy levels a calibration plays, weakest first."""
        return (cls.NOVICE, cls.CASUAL, cls.SKILLED)

    @property
    def skill(self) -> Skill:
        value: Skill = self.value
        return value


@dataclass(frozen=True, slots=True)
class PlayOutcome:
    """How one simulated game went."""

    won: bool
    moves: int
    seconds: float  # modelled thinking time
    points: int  # cards cleared, or score for the scored variants
    max_points: int


def max_points(game: Game) -> int:
    """Points of a won game: every card cleared (Tri Peaks: the 28 tableau cards; its stock
    stays), or the Triple Deck games' full score."""
    if game.scored:
        top = max(game.ranks)
        return game.decks * 4 * top * (top + 1) // 2
    state = game.full_state()
    if isinstance(state, TriPeaksState):
        return len(state.tableau)
    return game.total_cards
