"""Triple Easthaven's solver, a package of its searches:

* `search`: move generation, the sound and heuristic cuts, the depth-first search
  (`EasthavenSearch`, which alone can prove a deal impossible);
* `bestfirst`: the greedy best-first search for a win (`BestFirst`);
* `lines`: shorter winning lines (`shorten`) and the line checks (`legal`, `wins`);
* `solver`: `EasthavenSolver`, registered with `engine.solvers`, which runs them in turn.

The package uses only public names of the rules (`engine.easthaven`).
"""

from __future__ import annotations

from .solver import EasthavenSolver

__all__ = ["EasthavenSolver"]
