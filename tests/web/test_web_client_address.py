"""Whose address a sign-in counts against: the peer, or what a trusted proxy forwarded; IPv6 by its /64."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from hermes_gateway._core.web.client_address import client_of, parse_networks, throttle_key, was_forwarded

PROXIES = parse_networks(["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"])


def request(peer: str, forwarded: str | None = None, *more: str):
    headers = [("X-Forwarded-For", value) for value in ((forwarded,) if forwarded is not None else ()) + more]
    return make_mocked_request("POST", "/ui/login", headers=headers).clone(remote=peer)


@pytest.mark.parametrize("peer, forwarded, client", [
    ("203.0.113.7", "198.51.100.1", "203.0.113.7"),                  # not a proxy: the header is ignored
    ("127.0.0.1", None, "127.0.0.1"),                                # a proxy that forwarded nothing
    ("127.0.0.1", "198.51.100.1", "198.51.100.1"),
    ("127.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1"),          # the client's own entry is never reached
    ("127.0.0.1", "198.51.100.1, 10.0.0.2", "198.51.100.1"),         # two proxies
    ("127.0.0.1", "10.0.0.3, 10.0.0.2", "10.0.0.3"),                 # all proxies: the farthest one named
    ("127.0.0.1", "not-an-ip", "127.0.0.1"),                         # garbage from a proxy: the proxy itself
    ("127.0.0.1", "198.51.100.1:4711", "198.51.100.1"),
    ("127.0.0.1", "[2001:db8::1]:443", "2001:db8::1"),
    ("::ffff:127.0.0.1", "198.51.100.1", "198.51.100.1"),             # an IPv4-mapped peer is its IPv4 address
])
def test_the_client_is_the_nearest_address_that_is_no_trusted_proxy(peer, forwarded, client):
    assert str(client_of(request(peer, forwarded), PROXIES)) == client


def test_several_forwarded_for_headers_are_one_list():
    assert str(client_of(request("127.0.0.1", "6.6.6.6", "198.51.100.2"), PROXIES)) == "198.51.100.2"


def test_an_ipv6_client_is_counted_by_its_64_network():
    one = client_of(request("2001:db8:1:2::5"), PROXIES)
    other = client_of(request("2001:db8:1:2:ffff::9"), PROXIES)
    assert throttle_key(one) == throttle_key(other) == "2001:db8:1:2::/64"
    assert throttle_key(client_of(request("2001:db8:1:3::5"), PROXIES)) != throttle_key(one)
    assert throttle_key(client_of(request("203.0.113.7"), PROXIES)) == "203.0.113.7"


def test_a_forwarded_request_is_recognised():
    assert was_forwarded(request("127.0.0.1", "198.51.100.1"))
    assert not was_forwarded(request("127.0.0.1"))
