"""Build hook: the modules a move runs through, compiled to C extensions with mypyc.

The source stays pure Python (type-checked with `mypy --strict`); mypyc compiles the engine's
rule modules and the protocol's codec to C, which runs them two to four times as fast
(docs/performance.md). Every other setting lives in pyproject.toml.

    SOLITAIRE_PURE_PYTHON=1 pip install -e .    # no compilation: everything runs as Python

`make` installs without compiling and builds the libraries outside the source tree whenever a
source changed (`setup.py build_ext --build-lib .venv/compiled`, then `compiled_build.py`,
which loads them from there); a wheel (`pip wheel .`) carries them in place of the sources.
`engine.COMPILED` and `protocol.COMPILED` tell which code is running.
"""

from __future__ import annotations

import os

from setuptools import setup

#: The compiled modules (the Makefile's COMPILED_SRC names them too). Left as Python: the
#: solvers, the deal shuffle (tests subclass its generator) and the protocol's message
#: classes (declared as frozen dataclasses that the codec reads generically; Python code
#: subclasses them), with protocol/schema.py and fields.py (their `Struct` and `Spec` bases).
#: Of the server's move path, not router.py (its exception class derives from RuntimeError),
#: games/store.py (it casts Redis replies to types they only resemble: mypyc checks),
#: runtime/clock.py (a runtime-checkable Protocol), runtime/looplag.py (an async generator),
#: nor redis/keys.py (tests read its builders' signatures; 0.7 % of a move's instructions).
#: The server's modules here are 11 % fewer instructions per move (issue #30).
COMPILED_MODULES = [
    "engine/cards.py",
    "engine/moves.py",
    "engine/errors.py",
    "engine/views.py",
    "engine/game.py",
    "engine/pairing.py",
    "engine/tripeaks.py",
    "engine/tableau.py",
    "engine/tripledeck.py",
    "engine/easthaven/game.py",
    "engine/easthaven/over.py",
    "engine/state.py",
    "engine/variants.py",
    "engine/words.py",
    "engine/patches.py",
    "protocol/codec.py",
    "server/transport/connection.py",
    "server/transport/session.py",
    "server/transport/ratelimit.py",
    "server/handlers/games.py",
    "server/games/service.py",
    "server/runtime/metrics.py",
    "server/redis/batch.py",
    "server/redis/resp.py",
]


def ext_modules() -> list[object]:
    if os.environ.get("SOLITAIRE_PURE_PYTHON"):
        return []
    from mypyc.build import mypycify

    # The build runs before the dependencies are installed (and in an isolated environment):
    # a third-party import (msgpack) is then missing, so it is typed Any, as its untyped
    # package would be anyway; `make typecheck` checks the source strictly.
    options = ["--ignore-missing-imports", "--no-warn-unused-ignores"]
    return list(
        mypycify([*options, *COMPILED_MODULES], opt_level="3", group_name="solitaire_compiled")
    )


setup(ext_modules=ext_modules())
