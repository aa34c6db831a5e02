"""The request table: complete, built explicitly, refusing gaps and overlaps, and typed; a
handler runs on a `Session` without any socket."""

from __future__ import annotations

import pytest

import protocol as p
from server.handlers.games import GAME_ROUTES, ping
from server.handlers.races import RACE_ROUTES
from server.handlers.routes import ALL_ROUTES, app_router
from server.transport.router import IncompleteTable, Router


def test_every_client_message_type_has_exactly_one_handler() -> None:
    router = app_router()
    assert {route.request for route in router.routes()} == set(p.CLIENT_MESSAGES.values())
    assert sum(len(r) for r in ALL_ROUTES) == len(router)


def test_a_missing_handler_is_refused_at_app_creation() -> None:
    with pytest.raises(IncompleteTable, match=r"without a handler: .*race\.queue"):
        Router.join(GAME_ROUTES).complete()


def test_two_handlers_for_one_request_are_refused() -> None:
    with pytest.raises(IncompleteTable, match="two handlers: hello"):
        Router.join(GAME_ROUTES, RACE_ROUTES, Router().on(p.Hello, GAME_ROUTES.handler(p.Hello)))
    with pytest.raises(IncompleteTable, match="two handlers: ping"):
        Router().on(p.Ping, ping).on(p.Ping, ping)


def test_mypy_ties_the_request_type_to_the_handler() -> None:
    """A handler of another request type is refused by mypy (this module is type-checked
    with ``warn_unused_ignores``: were the error not reported, the ignore would fail mypy)."""
    router = Router()
    router.on(p.Move, ping)  # type: ignore[arg-type]
    router.on(p.Ping, ping)
    handler = router.handler(p.Ping)
    assert handler is not ping  # the route, which hands the request on to `ping`
