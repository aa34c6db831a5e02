"""The network a racer plays from (`server.transport.address.address_subnet`, grouped by
`server.races.networks`): what the queue keeps apart and
what is never rated against itself."""

from __future__ import annotations

import ipaddress

from hypothesis import given
from hypothesis import strategies as st

from server.races.networks import shared_networks
from server.transport.address import address_group
from server.transport.address import address_subnet as network_of


def test_ipv4_by_24_ipv6_by_48_mapped_as_ipv4() -> None:
    assert network_of("203.0.113.7") == network_of("203.0.113.250") == "203.0.113.0/24"
    assert network_of("203.0.114.7") != network_of("203.0.113.7")
    assert network_of("::ffff:203.0.113.9") == "203.0.113.0/24", "IPv4-mapped is IPv4"
    assert network_of("2001:db8:1:2::1") == network_of("2001:db8:1:2:ffff::9")
    assert network_of("2001:db8:1:2::1") == "2001:db8:1::/48"
    # Another /64 of the same /48 (one tunnel broker's free /48: cheater review F2).
    assert network_of("2001:db8:1:3::1") == network_of("2001:db8:1:2::1")
    assert network_of("2001:db8:2:2::1") != network_of("2001:db8:1:2::1"), "another /48"
    assert network_of("[2001:db8:1:2::1]") == "2001:db8:1::/48"
    assert network_of("") == "", "unknown: anyone's own"
    assert network_of("not-an-ip") == "not-an-ip"


@given(st.ip_addresses())
def test_networks_are_those_ipaddress_works_out(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    """The masks on the address's integer (issue #30: no `ip_network` parse per hello) give
    `ipaddress.ip_network`'s own text, and the kept answers the same as a fresh one."""
    text = str(ip)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        v4 = str(ip.ipv4_mapped)
        assert network_of(text) == str(ipaddress.ip_network(f"{v4}/24", strict=False))
        assert address_group(text) == v4
    elif isinstance(ip, ipaddress.IPv6Address):
        assert network_of(text) == str(ipaddress.ip_network(f"{text}/48", strict=False))
        assert address_group(text) == str(ipaddress.ip_network(f"{text}/64", strict=False))
    else:
        assert network_of(text) == str(ipaddress.ip_network(f"{text}/24", strict=False))
        assert address_group(text) == text
    assert network_of(text) == network_of.__wrapped__(text)


def test_only_groups_of_two_or_more_and_never_the_unknown() -> None:
    nets = {"a": "n1", "b": "n2", "c": "n1", "d": "", "e": "", "f": "n1"}
    assert shared_networks(["a", "b", "c", "d", "e", "f"], nets) == (("a", "c", "f"),)
    assert shared_networks(["a", "b"], nets) == ()
    assert shared_networks(["x", "y"], {}) == ()
