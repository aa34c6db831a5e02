"""The embedded Redis's data directory is its owner's only: its AOF holds tomorrow's daily
seeds and every token's hash (docs/fairplay.md, "Accounts, names and tokens")."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from server.redis.embedded import EmbeddedRedis, connect


def modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            out[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return out


async def test_data_dir_and_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old_umask = os.umask(0o022)  # a usual umask: without the fix, 0755 and 0644
    try:
        er = EmbeddedRedis(data)
        url = await er.start()
        client = connect(url)
        await client.set("sol:{d:fourteen-out:2030-06-16}:deal", '{"seed": 42}')
        await client.aclose()
        await er.stop()
    finally:
        os.umask(old_umask)
    found = modes(data)
    assert found["."] == 0o700, found
    assert any("appendonly" in name for name in found), found  # the AOF is there
    loose = {name: oct(mode) for name, mode in found.items() if mode & 0o077}
    assert not loose, loose


async def test_an_older_world_readable_data_dir_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    aof = data / "appendonly.aof"
    aof.write_text("")
    os.chmod(aof, 0o644)
    async with EmbeddedRedis(data):
        pass
    found = modes(data)
    assert found["."] == 0o700 and found["appendonly.aof"] & 0o077 == 0, found
