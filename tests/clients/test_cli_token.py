"""`solitaire token rotate` and `solitaire token revoke-all` against a real server."""

from __future__ import annotations

from tests.support.cliplayer import NamedPlayer
from tests.support.procs import ServerProcess
from tests.support.wsclient import Client


async def hello_code(url: str, token: str) -> str:
    c = await Client.connect(url)
    try:
        r = await c.request("hello", versions=[5], token=token)
        return str(r.get("code") or r["type"])
    finally:
        await c.close()


async def test_token_rotate_and_revoke_all_store_the_new_token(
    server: ServerProcess, named_player: NamedPlayer
) -> None:
    player = named_player("tokcli")
    old = player.token()

    rotated = player.run("token", "rotate")
    assert rotated.code == 0, rotated.err
    assert "old one no longer works" in rotated.err
    new = player.token()
    assert new != old
    assert await hello_code(server.url, old) == "not_authenticated"
    assert player.run("me").code == 0  # the stored (new) token works

    revoked = player.run("--json", "token", "revoke-all")
    assert revoked.code == 0, revoked.err
    assert revoked.json()["action"] == "revoke-all"
    newest = player.token()
    assert newest not in (old, new)
    assert await hello_code(server.url, new) == "not_authenticated"
    assert await hello_code(server.url, newest) == "welcome"
