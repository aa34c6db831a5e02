"""The network a racer plays from, for fair play in rated races (docs/fairplay.md, "One
network, one rating"): the IPv4 address's /24, the IPv6 address's /64 (an IPv4-mapped IPv6
address counts as its IPv4 address). The queue keeps the accounts of one network apart while
others wait, and racers of one network are never rated against each other."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence


def network_of(address: str) -> str:
    """The racer's network; an address that does not parse is its own network, and an empty
    one (a caller that knows none) stays empty: anyone's own."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            return str(ipaddress.ip_network(f"{ip}/64", strict=False))
        ip = ip.ipv4_mapped
    return str(ipaddress.ip_network(f"{ip}/24", strict=False))


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
