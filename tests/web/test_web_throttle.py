"""The sign-in throttle alone: reserved before the check, doubled waits past the free guesses, a right one clears."""

from __future__ import annotations

import asyncio

import aiohttp
from yarl import URL

from hermes_gateway._core.web.auth import AUTH_KEY
from hermes_gateway._core.web.throttle import FREE_GUESSES, MAX_LOCKOUT, Attempt, Throttle
from web_helpers import OUTSIDE, config, console_app


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_each_wrong_guess_past_the_free_ones_doubles_the_wait_and_a_right_one_clears_it():
    clock = Clock()
    throttle = Throttle(clock=clock)
    waits = []
    for _ in range(FREE_GUESSES + 12):
        attempt = throttle.reserve("198.51.100.1")
        assert isinstance(attempt, Attempt)  # never reserved while waiting: the clock moves past each wait
        waits.append(throttle.wait("198.51.100.1"))
        clock.now += waits[-1]
    assert waits[:FREE_GUESSES - 1] == [0.0] * (FREE_GUESSES - 1)
    assert waits[FREE_GUESSES - 1:FREE_GUESSES + 3] == [1.0, 2.0, 4.0, 8.0] and waits[-1] == MAX_LOCKOUT
    assert throttle.wait("198.51.100.2") == 0.0  # another address is not slowed
    right = throttle.reserve("198.51.100.1")
    assert isinstance(right, Attempt)
    throttle.succeeded(right)
    assert throttle.wait("198.51.100.1") == 0.0


def test_reserved_tries_count_before_any_is_checked():
    throttle = Throttle(clock=Clock())
    reserved = [throttle.reserve("203.0.113.9") for _ in range(200)]  # 200 at once: none checked yet
    assert sum(isinstance(r, Attempt) for r in reserved) == FREE_GUESSES
    assert all(isinstance(r, float) and r > 0 for r in reserved[FREE_GUESSES:])


def test_the_addresses_remembered_are_bounded():
    throttle = Throttle(clock=Clock(), tracked=3)
    for i in range(10):
        for _ in range(FREE_GUESSES):
            throttle.reserve(f"198.51.100.{i}")
    assert throttle.wait("198.51.100.9") > 0 and throttle.wait("198.51.100.0") == 0.0


# -- through POST /ui/login ----------------------------------------------------------------------------------

PASSWORD = "correct horse battery"


def stop_the_clock(client) -> None:
    """The throttle's waits never run out during the test, however slowly a loaded machine answers."""
    client.server.app[AUTH_KEY].throttle.clock = lambda: 1000.0


async def sign_in(client, secret: str, forwarded_for: str | None = None):
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    async with client.post("/ui/login", json={"secret": secret}, headers=headers) as r:
        return r.status


async def test_200_parallel_wrong_sign_ins_from_one_address_are_almost_all_refused_unchecked():
    """Each body arrives only once all 200 requests are in: every check of the wait happens before any secret is."""
    sent, release = 0, asyncio.Event()

    async def body(i: int):
        nonlocal sent
        yield b'{"secret": '
        sent += 1
        if sent == 200:
            release.set()
        await release.wait()
        yield b'"guess %d"}' % i

    async def guess(http: aiohttp.ClientSession, url: URL, i: int) -> int:
        async with http.post(url, data=body(i), headers={"Content-Type": "application/json"}) as r:
            return r.status

    async with console_app(config({"password": PASSWORD}), peer=OUTSIDE) as client, \
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        stop_the_clock(client)
        statuses = await asyncio.gather(*(guess(http, client.make_url("/ui/login"), i) for i in range(200)))
        assert statuses.count(429) >= 190 and set(statuses) == {401, 429}, sorted(statuses)
        assert statuses.count(401) == FREE_GUESSES  # exactly the free guesses were checked
        assert await sign_in(client, PASSWORD) == 429  # the right one too, while the address waits


async def test_behind_a_trusted_proxy_one_locked_out_client_locks_out_nobody_else():
    cfg = config({"password": PASSWORD, "trusted_proxies": ["127.0.0.1", "10.0.0.0/8"]})
    async with console_app(cfg, peer="127.0.0.1") as client:  # every request comes through the local proxy
        stop_the_clock(client)
        statuses = [await sign_in(client, "wrong", "198.51.100.9") for _ in range(FREE_GUESSES + 3)]
        assert statuses[-1] == 429 and statuses[:FREE_GUESSES] == [401] * FREE_GUESSES
        # what the client wrote itself sits left of what the proxies appended: it changes nothing
        assert await sign_in(client, "wrong", "203.0.113.50, 198.51.100.9") == 429
        assert await sign_in(client, "wrong", "203.0.113.50, 198.51.100.9, 10.1.2.3") == 429
        assert await sign_in(client, PASSWORD, "198.51.100.9") == 429
        assert await sign_in(client, PASSWORD, "203.0.113.50") == 200  # another client, through the same proxy
        assert await sign_in(client, PASSWORD, "203.0.113.51, 10.9.9.9") == 200  # and through two proxies


async def test_forwarded_for_from_a_peer_that_is_no_trusted_proxy_is_ignored():
    cfg = config({"password": PASSWORD, "trusted_proxies": ["127.0.0.1"]})
    async with console_app(cfg, peer=OUTSIDE) as client:
        stop_the_clock(client)
        statuses = [await sign_in(client, "wrong", f"198.51.100.{i}") for i in range(FREE_GUESSES + 2)]
        assert statuses[FREE_GUESSES:] == [429, 429]  # counted against the peer, whatever the header says
        assert await sign_in(client, PASSWORD, "203.0.113.50") == 429


async def test_without_trusted_proxies_a_local_proxy_is_one_client():
    async with console_app(config({"password": PASSWORD}), peer="127.0.0.1") as client:
        stop_the_clock(client)
        for i in range(FREE_GUESSES):
            assert await sign_in(client, "wrong", f"198.51.100.{i}") == 401
        assert await sign_in(client, PASSWORD, "203.0.113.50") == 429
