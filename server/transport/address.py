"""Who is on the other end of a WebSocket: its client address and its origin.

`client_address` is the one place the client's address is worked out (docs/fairplay.md,
"Limits per address and per account"): the peer address, unless the peer is a trusted proxy
(``--trusted-proxies``), in which case the right-most address of ``X-Forwarded-For`` that is
not itself a trusted proxy. A client can write anything into ``X-Forwarded-For``, so its
entries are believed only as far as a trusted proxy appended them, right to left.

`address_group` is what the per-address limits count: an IPv4 address itself, an IPv6
address's /64 (one subscriber usually holds a whole /64). `origin_allowed` is the WebSocket
``Origin`` allow-list.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ConnectionCounter",
    "TrustedProxies",
    "address_group",
    "address_subnet",
    "client_address",
    "origin_allowed",
]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class TrustedProxies:
    """The networks whose ``X-Forwarded-For`` is believed."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, cidrs: Iterable[str]) -> TrustedProxies:
        return cls(tuple(ipaddress.ip_network(c, strict=False) for c in cidrs))

    def trusts(self, address: Address | None) -> bool:
        if address is None:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address.version == n.version and address in n for n in self.networks)


def _parse(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def client_address(peer: str | None, forwarded_for: str | None, proxies: TrustedProxies) -> str:
    """The client's address: ``peer``, or, when the peer is a trusted proxy, the right-most
    entry of ``X-Forwarded-For`` that is not one (every entry trusted: the left-most). A
    malformed entry stops the walk at the hop that wrote it. "" when the peer is unknown."""
    peer_ip = _parse(peer) if peer else None
    if peer_ip is None:
        return peer or ""
    if not forwarded_for or not proxies.trusts(peer_ip):
        return str(peer_ip)
    current = peer_ip
    for entry in reversed(forwarded_for.split(",")):
        hop = _parse(entry)
        if hop is None:
            return str(current)  # the trusted hop's own address: nothing to its left is known
        current = hop
        if not proxies.trusts(hop):
            return str(hop)
    return str(current)


#: The per-address rules below run on every connection and every new player or race join;
#: `ipaddress.ip_network` parsed a text of its own each time (14 µs an IPv4 subnet, 36 an
#: IPv6 one: issue #30, a new player's `hello`), so networks are masked from the address's
#: integer, and the answers for the addresses seen lately are kept (pure functions of the text).
_KEPT = 4096
_V6_64 = ~((1 << 64) - 1)
_V6_48 = ~((1 << 80) - 1)
_V4_24 = 0xFFFF_FF00


@functools.lru_cache(maxsize=_KEPT)
def address_group(address: str) -> str:
    """What the per-address limits count: the IPv4 address, or the IPv6 address's /64."""
    ip = _parse(address)
    if ip is None:
        return address or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return f"{ipaddress.IPv6Address(int(ip) & _V6_64)}/64"
    return str(ip)


@functools.lru_cache(maxsize=_KEPT)
def address_subnet(address: str) -> str:
    """The subscriber's network, for rules that tell people apart (one network, one rating in
    races: docs/fairplay.md): the IPv4 address's /24, the IPv6 address's /48 (what one site
    is usually given, and what a tunnel broker hands out free: counted by /64, one person's
    /48 was 65,536 "networks", cheater review F2). An IPv4-mapped IPv6 address counts as its
    IPv4 address. An address that does not parse is its own network, and an empty one stays
    empty (a caller that knows none: anyone's own)."""
    ip = _parse(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            return f"{ipaddress.IPv6Address(int(ip) & _V6_48)}/48"
        ip = ip.ipv4_mapped
    return f"{ipaddress.IPv4Address(int(ip) & _V4_24)}/24"


def address_network(address: str) -> str:
    """`address_subnet` for limits a spread of addresses must not multiply (an unknown
    address is one network, "unknown")."""
    return address_subnet(address) or "unknown"


def origin_allowed(origin: str | None, host: str | None, allowed: Iterable[str]) -> bool:
    """Whether a WebSocket upgrade with this ``Origin`` may proceed: no Origin (not a
    browser), the server's own origin (``Host`` as the browser reached it; either scheme, as
    a TLS-terminating proxy hides which one was used),
    an origin of ``allowed`` (``scheme://host[:port]``, lower case) or ``allowed`` holding
    ``*``."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    allowed = set(allowed)
    if "*" in allowed or origin in allowed:
        return True
    if not host:
        return False
    host = host.strip().lower()
    own = {f"http://{host}", f"https://{host}"}
    for scheme, port in (("http", ":80"), ("https", ":443")):
        if host.endswith(port):  # a default port may be left out of the Origin
            own.add(f"{scheme}://{host.removesuffix(port)}")
    return origin in own


class ConnectionCounter:
    """Open WebSockets per address group in this process (``--connections-per-address``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def acquire(self, group: str) -> bool:
        """Count one more connection of ``group``; False (nothing counted) at the limit."""
        n = self._open.get(group, 0)
        if self.limit and n >= self.limit:
            return False
        self._open[group] = n + 1
        return True

    def release(self, group: str) -> None:
        n = self._open.get(group, 0) - 1
        if n > 0:
            self._open[group] = n
        else:
            self._open.pop(group, None)

    def open(self, group: str) -> int:
        return self._open.get(group, 0)
