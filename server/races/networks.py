"""Racers who play from one network, for fair play in rated races (docs/fairplay.md, "One
network, one rating"): a racer's network is `server.transport.address.address_subnet` (the
IPv4 /24, the IPv6 /48). The queue keeps the accounts of one network apart while others
wait, and racers of one network are never rated against each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def shared_networks(
    pids: Sequence[str], networks: Mapping[str, str]
) -> tuple[tuple[str, ...], ...]:
    """The groups (two or more, in `pids` order) of racers who play from one network; a racer
    of an unknown (empty) network shares it with nobody."""
    groups: dict[str, list[str]] = {}
    for pid in pids:
        net = networks.get(pid, "")
        if net:
            groups.setdefault(net, []).append(pid)
    return tuple(tuple(g) for g in groups.values() if len(g) >= 2)
