"""Build hook: the engine's rule modules compiled to C extensions with mypyc.

The source stays the pure-Python engine (type-checked with `mypy --strict`); mypyc compiles the
modules a move goes through to C, which runs them about twice as fast (docs/performance.md).
Every other setting lives in pyproject.toml.

    SOLITAIRE_PURE_ENGINE=1 pip install -e .    # no compilation: the engine runs as Python

`make test` builds in place (`setup.py build_ext --inplace`) whenever an engine source changed;
`engine.COMPILED` tells which engine is running.
"""

from __future__ import annotations

import os

from setuptools import setup

#: The modules a move runs through (the solvers and the deal shuffle stay Python: the solvers
#: subclass nothing compiled, and tests subclass the deal generator).
COMPILED_MODULES = [
    "engine/cards.py", "engine/moves.py", "engine/errors.py", "engine/views.py",
    "engine/game.py", "engine/pairing.py", "engine/tripeaks.py", "engine/tableau.py",
    "engine/tripledeck.py", "engine/easthaven.py", "engine/deadlock.py", "engine/state.py",
    "engine/variants.py",
]


def ext_modules() -> list[object]:
    if os.environ.get("SOLITAIRE_PURE_ENGINE"):
        return []
    from mypyc.build import mypycify

    return list(mypycify(COMPILED_MODULES, opt_level="3", group_name="engine_compiled"))


setup(ext_modules=ext_modules())
