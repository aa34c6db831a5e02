"""The request table: every client message type to its handler, built once per app.

`build_table` joins the handler tables of the request modules and refuses, at app creation,
a request type without a handler or with two (a check `python -O` does not strip).
"""

from __future__ import annotations

from collections.abc import Mapping

import protocol as p
from server.handlers.account import ACCOUNT_HANDLERS
from server.handlers.games import GAME_HANDLERS, HandlerTable
from server.handlers.races import RACE_HANDLERS
from server.handlers.social import SOCIAL_HANDLERS
from server.handlers.solver import SOLVER_HANDLERS
from server.transport.connection import Handler

__all__ = ["ALL_TABLES", "IncompleteTable", "build_table"]

#: The handler tables of every request module.
ALL_TABLES: tuple[HandlerTable, ...] = (
    GAME_HANDLERS,
    RACE_HANDLERS,
    SOLVER_HANDLERS,
    SOCIAL_HANDLERS,
    ACCOUNT_HANDLERS,
)


class IncompleteTable(RuntimeError):
    """A client message type has no handler, or more than one."""


def build_table(*tables: HandlerTable) -> Mapping[type[p.ClientMessage], Handler]:
    """One table from `tables` (default: every module's), complete and without overlaps."""
    joined: dict[type[p.ClientMessage], Handler] = {}
    for table in tables or ALL_TABLES:
        twice = joined.keys() & table.keys()
        if twice:
            raise IncompleteTable(f"requests with two handlers: {_names(twice)}")
        joined.update(table)
    missing = set(p.CLIENT_MESSAGES.values()) - joined.keys()
    if missing:
        raise IncompleteTable(f"requests without a handler: {_names(missing)}")
    return joined


def _names(classes: set[type[p.ClientMessage]]) -> str:
    return ", ".join(sorted(c.type for c in classes))
