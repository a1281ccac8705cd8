"""Who is asking, as the sign-in throttle counts them: the client's address, through trusted proxies only.

Behind a reverse proxy every request comes from the proxy's address, so a
throttle keyed on the TCP peer would lock everyone out at once for one
attacker's guesses. ``web.trusted_proxies`` names the proxies (IPs or
networks) whose ``X-Forwarded-For`` is believed: the client is the nearest
address in that header that is not itself a trusted proxy, read from the
right (each proxy appends the address it saw, so whatever a client wrote
itself sits to the left and is never reached while a trusted hop is
there to name the real one). From any other peer the header is ignored: a
client could simply send it.

An IPv6 client is counted by its /64 network: one machine commonly holds a
whole /64, and would otherwise get a fresh allowance with each address.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable

from aiohttp import web

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: Headers a reverse proxy adds: a request carrying one was forwarded, so it is not "a browser on this machine".
FORWARDING_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host")
#: The most ``X-Forwarded-For`` entries looked at (a longer chain is somebody's invention).
MAX_HOPS = 20


def parse_networks(items: Iterable[str]) -> tuple[Network, ...]:
    """``web.trusted_proxies`` (already validated by the config) as networks."""
    return tuple(ipaddress.ip_network(item, strict=False) for item in items)


def parse_address(text: str) -> Address | None:
    """An address as a peer or a proxy writes it: ``203.0.113.7``, ``2001:db8::1``, ``[2001:db8::1]:443``,
    ``203.0.113.7:5060`` (an IPv4-mapped IPv6 address is its IPv4 one); None if it is none of these."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1:text.index("]")]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def trusted(address: Address | None, proxies: tuple[Network, ...]) -> bool:
    return address is not None and any(address in network for network in proxies)


def client_of(request: web.Request, proxies: tuple[Network, ...]) -> Address | None:
    """The client's address: the TCP peer, or, when the peer is a trusted proxy, the address it forwarded."""
    peer = parse_address(request.remote or "")
    if not trusted(peer, proxies):
        return peer
    hops = [h for value in request.headers.getall("X-Forwarded-For", ()) for h in value.split(",")]
    client = peer
    for hop in reversed(hops[-MAX_HOPS:]):
        address = parse_address(hop)
        if address is None:
            return client  # a proxy we trust wrote something that is no address: the last one it named
        client = address
        if not trusted(address, proxies):
            return address
    return client


def throttle_key(address: Address | None) -> str:
    """What the throttle counts: the IPv4 address, or the IPv6 address's /64 network."""
    if address is None:
        return "?"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def was_forwarded(request: web.Request) -> bool:
    """The request came through a proxy (it carries a header only a proxy adds)."""
    return any(name in request.headers for name in FORWARDING_HEADERS)
