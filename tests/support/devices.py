"""Signing in for the account and device tests: a player by name, a second device by a
sign-in code, a try of a code, a token's check, and the close of a revoked session. Each
takes where to connect: an in-process app (`tests.support.app.App`) or a server process
(`tests.support.procs.ServerProcess`)."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from tests.support.wsclient import Client

#: Versions of a devices-aware client (protocol 9, `device.revoke` and `devices`).
V9 = (7, 8, 9)


class Served(Protocol):
    """A running server: its WebSocket URL."""

    @property
    def url(self) -> str: ...


async def signed_in(at: Served, name: str, versions: tuple[int, ...] = V9) -> Client:
    """A new connection said hello as the player ``name`` (created on first use)."""
    c = await Client.connect(at.url)
    await c.hello(name=name, versions=versions)
    return c


async def code_of(c: Client) -> str:
    """A one-time sign-in code of ``c``'s player (``signin.code``; asserts it is given)."""
    shown = await c.request("signin.code")
    assert shown["type"] == "signin.code", shown
    return str(shown["code"])


async def device_of(
    at: Served, owner: Client, versions: tuple[int, ...] = V9, **more: Any
) -> Client:
    """A second device of ``owner``'s player: a code of the owner's redeemed on ``at``."""
    return await redeem_on(at, await code_of(owner), versions, **more)


async def redeem_on(at: Served, code: str, versions: tuple[int, ...] = V9, **more: Any) -> Client:
    """A new connection signed in with ``code`` (asserts it worked)."""
    c = await Client.connect(at.url)
    welcome = await c.request("signin.redeem", versions=list(versions), code=code, **more)
    assert welcome["type"] == "welcome", welcome
    c.player_id, c.token = welcome["player_id"], welcome["token"]
    return c


async def try_redeem(
    at: Served, code: str, versions: tuple[int, ...] = V9, **more: Any
) -> dict[str, Any]:
    """The answer to a ``signin.redeem`` of ``code`` on a connection of its own."""
    c = await Client.connect(at.url)
    try:
        return await c.request("signin.redeem", versions=list(versions), code=code, **more)
    finally:
        await c.close()


async def closed_with(c: Client, timeout: float = 5.0) -> tuple[int, str]:
    """Wait for the server to close ``c``: its close code and reason."""
    await asyncio.wait_for(c.ws.wait_closed(), timeout)
    assert c.ws.close_code is not None
    return c.ws.close_code, c.ws.close_reason or ""


async def token_works(at: Served, token: str, versions: tuple[int, ...] = V9) -> bool:
    """Whether a hello with ``token`` is welcomed."""
    c = await Client.connect(at.url)
    try:
        r = await c.request("hello", versions=list(versions), token=token)
        return bool(r["type"] == "welcome")
    finally:
        await c.close()
