"""The request table: each client message type to its one handler, typed.

``router.on(p.Move, move)`` ties the handler's request type to the message type: mypy refuses
a handler whose request parameter is another message (``router.on(p.Move, ping)``). Each
handler module builds a `Router`; `Router.join` makes the app's one table and `complete`
refuses, at app creation, a request type without a handler (a check ``python -O`` does not
strip); a second handler for one type is refused when it is added.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, cast

import protocol as p
from server.transport.session import Session

__all__ = ["Handler", "IncompleteTable", "Route", "Router"]

Req = TypeVar("Req", bound=p.ClientMessage)

#: A request handler: the session and the validated request in, the reply out. It raises
#: ProtocolError, ServerError or IllegalMove for error replies (`connection.error_reply`).
Handler = Callable[[Session, Req], Awaitable[p.ServerMessage]]


class IncompleteTable(RuntimeError):
    """A client message type has no handler, or more than one."""


class TableRoute(Protocol):
    """A route as the table holds it: any request in (the table keys it by its type)."""

    @property
    def request(self) -> type[p.ClientMessage]: ...

    @property
    def handler(self) -> Callable[..., Awaitable[p.ServerMessage]]: ...

    def __call__(
        self, session: Session, request: p.ClientMessage
    ) -> Awaitable[p.ServerMessage]: ...


@dataclass(frozen=True, slots=True)
class Route(Generic[Req]):
    """One message type and its handler, whose request parameter is that type."""

    request: type[Req]
    handler: Handler[Req]

    def __call__(self, session: Session, request: p.ClientMessage) -> Awaitable[p.ServerMessage]:
        # The table is keyed by `type(request)`, so `request` is a `Req` here.
        return self.handler(session, cast(Req, request))


class Router:
    """Client message types to their handlers."""

    __slots__ = ("_handlers", "_routes")

    def __init__(self) -> None:
        self._routes: dict[type[p.ClientMessage], TableRoute] = {}
        #: The handlers by request type, called with no route in between (`dispatch`).
        self._handlers: dict[type[p.ClientMessage], Handler[p.ClientMessage]] = {}

    def on(self, request: type[Req], handler: Handler[Req]) -> Router:
        """Route ``request`` messages to ``handler``; IncompleteTable if it has one already."""
        if request in self._routes:
            raise IncompleteTable(f"requests with two handlers: {request.type}")
        route: Route[Req] = Route(request, handler)
        self._add(route)
        return self

    def _add(self, route: TableRoute) -> None:
        self._routes[route.request] = route
        # Sound: `dispatch` calls it only with a request of type `route.request`.
        self._handlers[route.request] = cast(Handler[p.ClientMessage], route.handler)

    def handler(self, request: type[Req]) -> Handler[Req]:
        """The handler routed for ``request`` messages (KeyError when none is)."""
        return self._routes[request]

    def routes(self) -> Iterable[TableRoute]:
        return self._routes.values()

    def __contains__(self, request: type[p.ClientMessage]) -> bool:
        return request in self._routes

    def __len__(self) -> int:
        return len(self._routes)

    @classmethod
    def join(cls, *routers: Router) -> Router:
        """One router of all of ``routers``; IncompleteTable when two route one type."""
        joined = cls()
        for router in routers:
            twice = joined._routes.keys() & router._routes.keys()
            if twice:
                raise IncompleteTable(f"requests with two handlers: {_names(twice)}")
            for route in router._routes.values():
                joined._add(route)
        return joined

    def overridden(self, other: Router) -> Router:
        """A copy with ``other``'s routes in place of this one's (tests inject faults so)."""
        copy = Router()
        for route in (*self._routes.values(), *other._routes.values()):
            copy._add(route)
        return copy

    def complete(self, requests: Iterable[type[p.ClientMessage]] | None = None) -> Router:
        """This router, checked to route every client message type (or ``requests``)."""
        wanted = set(p.CLIENT_MESSAGES.values() if requests is None else requests)
        missing = wanted - self._routes.keys()
        if missing:
            raise IncompleteTable(f"requests without a handler: {_names(missing)}")
        return self

    def dispatch(self, session: Session, request: p.ClientMessage) -> Awaitable[p.ServerMessage]:
        """The reply to ``request`` from its handler (KeyError: no route; `complete` checks)."""
        return self._handlers[type(request)](session, request)


def _names(classes: Iterable[type[p.ClientMessage]]) -> str:
    return ", ".join(sorted(c.type for c in classes))
