"""Redis unreachable: at start one line naming where; while running, replies go on and the log stays quiet."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest

from hermes_gateway._core.config import ConfigError, parse_config
from hermes_gateway._core.gateway import StartError
from coordination_helpers import RedisServer, Webhooks, reference, replica


async def test_an_unreachable_redis_stops_start_up_in_one_line_naming_where_never_the_password():
    gateway = replica(reference(), "redis://:s3cret-passw0rd@127.0.0.1:1/0")
    with pytest.raises(StartError) as failure:
        await gateway.start()
    message = str(failure.value)
    assert "127.0.0.1:1" in message and "Redis" in message
    assert "s3cret-passw0rd" not in message and "\n" not in message


async def test_redis_going_away_mid_reply_the_reply_finishes_and_one_line_says_so(caplog):
    server = RedisServer().start()
    try:
        ref = reference()
        async with replica(ref, server.url, tokens_per_second=10) as gateway:
            hooks = Webhooks(gateway)
            words = " ".join(f"w{i}" for i in range(30))
            with caplog.at_level(logging.WARNING, logger="hermes_gateway._core.coordination"):
                reply = hooks.deliver(0, "1", f"echo: {words}")
                await asyncio.sleep(0.8)
                server.stop()  # Redis goes away while the reply streams
                report = await reply
                during = hooks.deliver(0, "1", "echo: still here", update_id="u-during")
                assert (await during).delivered
                again = hooks.deliver(0, "1", "echo: still here", update_id="u-during")  # local dedupe still works
                assert await again is None
                down = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
                server.start()  # ... and comes back
                outage = gateway.coordination.outage
                await asyncio.sleep(max(outage.retry_at - time.monotonic(), 0) + 0.1)  # past the pause after failing
                after = hooks.deliver(0, "1", "echo: back again", update_id="u-after")
                assert (await after).delivered
            assert report.delivered and not report.interrupted
            assert len(down) == 1, down  # one line for the whole outage, not one per call
            assert "Redis at" in down[0] and server.url[len("unix://"):] in down[0]
            assert any("is back" in r.getMessage() for r in caplog.records)
            assert gateway.coordination.outage.fallbacks > 5  # many calls ran on local state meanwhile
            with server.client() as client:  # shared again: the new update was claimed in Redis
                assert client.exists("hermes:seen:reference:u-after") == 1
        assert ref.chat("1").screen == [words, "still here", "back again"]
        assert ref.chat("1").violations == [] and ref.chat("1").throttled == 0
    finally:
        server.stop()


def test_coordination_config_is_checked_in_one_line_per_mistake():
    ok = parse_config({"coordination": {"url": "redis://cache:6379/0", "lease_ttl": 5, "dedupe_ttl": 600}}, env={})
    assert (ok.coordination.url, ok.coordination.lease_ttl, ok.coordination.dedupe_ttl) == \
        ("redis://cache:6379/0", 5.0, 600)
    assert parse_config({}, env={}).coordination.url is None  # default: one replica, in-process
    from hermes_gateway._core.cli.config_cmd import effective

    shown = effective(parse_config({"coordination": {"url": "redis://:pw-secret-1@cache:6379/0"}}, env={}))
    assert shown["coordination"]["url"] == "redis://***@cache:6379/0"  # `hermes-gateway config` masks it
    cases = {
        "coordination.url": {"url": "http://:pw-secret-1@cache:6379"},
        "coordination.lease_ttl": {"lease_ttl": 0},
        "coordination.dedupe_ttl": {"dedupe_ttl": "a day"},
        "coordination.lease": {"lease": 5},
    }
    for key, section in cases.items():
        with pytest.raises(ConfigError) as failure:
            parse_config({"coordination": section}, source="config.yaml", env={})
        text = str(failure.value)
        assert "config.yaml" in text and key in text and "\n" not in text and "pw-secret-1" not in text


def test_an_outage_is_logged_once_a_minute_with_how_much_ran_without_redis(caplog):
    from hermes_gateway._core.coordination.outage import Outage

    now = [100.0]
    outage = Outage("cache:6379", retry=1.0, max_retry=1.0, log_every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="hermes_gateway._core.coordination"):
        for _ in range(150):  # Redis down for 150 s, a call every 0.1 s
            for _ in range(10):
                if outage.available():
                    outage.failed(ConnectionError("refused"))
                now[0] += 0.1
        outage.succeeded()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4  # at 0 s, 60 s, 120 s, and "back"
    assert all("cache:6379" in line for line in lines)
    assert "1 operation so far" in lines[0]
    counted = int(re.search(r"\((\d+) operations so far", lines[1]).group(1))
    assert 600 <= counted <= 610  # a minute's worth (the line comes with the first retry after the minute)
    assert "is back after 150 s" in lines[3]
    assert outage.outages == 1 and outage.fallbacks == 1500


def test_while_redis_stays_away_it_is_asked_less_and_less_often():
    from hermes_gateway._core.coordination.outage import Outage

    now = [0.0]
    outage = Outage("cache:6379", retry=1.0, max_retry=8.0, clock=lambda: now[0])
    asked = []
    for tick in range(600):  # a minute, a call every 0.1 s
        now[0] = tick / 10
        if outage.available():
            asked.append(now[0])
            outage.failed(ConnectionError("refused"))
    assert asked[:5] == [0.0, 1.0, 3.0, 7.0, 15.0]  # then every 8 s
    assert all(b - a <= 8.05 for a, b in zip(asked, asked[1:]))
    outage.succeeded()
    assert outage.available() and not outage.down


async def _held_lease(redis_url: str, ttl: float):
    from hermes_gateway._core.coordination.redis import RedisCoordination

    coord = RedisCoordination(redis_url, lease_ttl=ttl)
    await coord.start()
    lease = coord.lease(("reference", "1", None))
    lost: list[int] = []
    await lease.acquire(lambda: 1, lambda: lost.append(1))
    assert lease.held
    return coord, lease, lost


async def test_a_lease_not_renewed_during_an_outage_is_not_held_and_is_taken_back_when_redis_answers(
        redis_server, redis_url):
    coord, lease, lost = await _held_lease(redis_url, 0.6)
    try:
        asked = coord.outage.available
        coord.outage.available = lambda: False  # Redis cannot be asked: every renewal falls back
        await asyncio.sleep(1.2)
        with redis_server.client() as client:
            assert client.get(lease.keys[0]) is None  # it ran out on the server
        assert not lease.held  # ... and this replica knows (a fallback is no renewal)
        coord.outage.available = asked  # Redis answers again; nobody else wanted the chat
        await asyncio.sleep(0.6)
        assert lease.held and lost == []  # the reply was not cut: the chat is its again
        with redis_server.client() as client:
            assert client.get(lease.keys[0]) == coord.replica_id
    finally:
        await lease.release()
        await coord.close()


async def test_a_lease_another_replica_took_during_an_outage_stops_the_reply_when_redis_answers(
        redis_server, redis_url):
    coord, lease, lost = await _held_lease(redis_url, 0.6)
    try:
        asked = coord.outage.available
        coord.outage.available = lambda: False
        await asyncio.sleep(1.0)
        with redis_server.client() as client:
            client.set(lease.keys[0], "other-replica", px=5000)  # the other replica took the chat meanwhile
        coord.outage.available = asked
        await asyncio.sleep(0.6)
        assert lost == [1] and not lease.held
    finally:
        await lease.release()
        await coord.close()
