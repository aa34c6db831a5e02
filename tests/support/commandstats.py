"""What a real Redis ran, from its `INFO commandstats`: the tests that count commands."""

from __future__ import annotations

import redis.asyncio


async def commands_run(client: redis.asyncio.Redis) -> dict[str, int]:
    """Calls per command Redis ran so far (`INFO commandstats`), INFO itself left out."""
    stats = await client.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(v["calls"])
        for name, v in stats.items()
        if isinstance(v, dict) and name != "cmdstat_info"
    }


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """The commands run between two `commands_run` readings, by how many times."""
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}
