"""Display names that look alike are one name; a few names are reserved.

A name is 3..20 of ``A-Z a-z 0-9 _ -`` (the protocol checks that first). Two names are the
same name when their folds are equal. `fold_name` is the Unicode confusables skeleton
(UTS #39) restricted to that alphabet, then case-folded:

* case: ``Alice`` = ``alice``;
* letters and digits drawn alike: ``0`` = ``o``; ``1`` = ``l`` = ``I`` (capital i) = ``i``
  (so ``AIice``, ``A1ice``, ``alice`` and ``aiice`` are one name); ``5`` = ``s``;
* pairs drawn as one letter: ``rn`` = ``m``, ``vv`` = ``w``;
* ``-`` = ``_``.

`RESERVED` names (by fold, so ``Adm1n`` too, and without separators, so ``admin_`` and
``a-dmin`` too) are refused with ``invalid_name``: nobody may pass for the service or its
staff. Separators are dropped only there: ``bob`` and ``bob_`` are two players' names.
"""

from __future__ import annotations

from typing import Final

__all__ = ["RESERVED", "fold_name", "is_reserved"]

_CHARS: Final = str.maketrans({"0": "o", "1": "l", "i": "l", "5": "s", "-": "_"})
_PAIRS: Final = (("rn", "m"), ("vv", "w"))


def fold_name(name: str) -> str:
    """The form under which ``name`` is unique (see the module docstring)."""
    folded = name.casefold()
    for pair, letter in _PAIRS:  # before the single characters: "rn" stays "rn" until here
        folded = folded.replace(pair, letter)
    return folded.translate(_CHARS)


#: Names nobody may take (compared by fold).
RESERVED: Final[frozenset[str]] = frozenset(
    fold_name(n)
    for n in (
        "admin",
        "administrator",
        "root",
        "moderator",
        "mod",
        "staff",
        "support",
        "system",
        "server",
        "solitaire",
        "official",
        "anonymous",
        "nobody",
        "null",
        "undefined",
    )
)


def is_reserved(name: str) -> bool:
    """``name`` folds to a reserved name once its separators (``_``, ``-``) are dropped."""
    return fold_name(name).replace("_", "") in RESERVED
