"""Triple Easthaven: the rules (`game`) and the exact game-over check (`over`).

    from engine.easthaven import TripleEasthaven, PILES, PER_SUIT

The solvers (`engine.solvers.easthaven`) use only the public names exported here and by
`engine.easthaven.over`.
"""

from __future__ import annotations

from .game import PER_SUIT, PILES, EasthavenOverTask, TripleEasthaven

__all__ = ["PER_SUIT", "PILES", "EasthavenOverTask", "TripleEasthaven"]
