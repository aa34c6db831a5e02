"""The app's one request table: every handler module's routes joined, checked complete."""

from __future__ import annotations

from server.handlers.account import ACCOUNT_ROUTES
from server.handlers.freeplay import FREE_ROUTES
from server.handlers.games import GAME_ROUTES
from server.handlers.races import RACE_ROUTES
from server.handlers.social import SOCIAL_ROUTES
from server.handlers.solver import SOLVER_ROUTES
from server.handlers.tiers import TIER_ROUTES
from server.transport.router import Router

__all__ = ["ALL_ROUTES", "app_router"]

#: The routes of every request module.
ALL_ROUTES: tuple[Router, ...] = (
    GAME_ROUTES,
    RACE_ROUTES,
    SOLVER_ROUTES,
    SOCIAL_ROUTES,
    ACCOUNT_ROUTES,
    FREE_ROUTES,
    TIER_ROUTES,
)


def app_router() -> Router:
    """Every module's routes in one router; `IncompleteTable` when a request type has no
    handler or two (raised at app creation)."""
    return Router.join(*ALL_ROUTES).complete()
