"""The request table is complete, built explicitly, and refuses gaps and overlaps."""

from __future__ import annotations

import pytest

import protocol as p
from server.handlers.games import GAME_HANDLERS
from server.handlers.races import RACE_HANDLERS
from server.transport.dispatch import ALL_TABLES, IncompleteTable, build_table


def test_every_client_message_type_has_exactly_one_handler() -> None:
    table = build_table()
    assert set(table) == set(p.CLIENT_MESSAGES.values())
    assert sum(len(t) for t in ALL_TABLES) == len(table)


def test_a_missing_handler_is_refused_at_app_creation() -> None:
    with pytest.raises(IncompleteTable, match=r"without a handler: .*race\.queue"):
        build_table(GAME_HANDLERS)


def test_two_handlers_for_one_request_are_refused() -> None:
    with pytest.raises(IncompleteTable, match="two handlers: hello"):
        build_table(GAME_HANDLERS, RACE_HANDLERS, {p.Hello: GAME_HANDLERS[p.Ping]})
