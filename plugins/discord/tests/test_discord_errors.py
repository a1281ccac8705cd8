"""Discord failures reach the core as RateLimited / DeliveryError with the right flags, never handled here."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from discord_test_support import OFFLINE, runner_for
from hermes_gateway import DeliveryError, MessageRef, RateLimited, Stream
from hermes_discord.errors import translate
from hermes_discord.ratelimit import Refused


@pytest.fixture
async def runner(loose_api):
    async with runner_for(loose_api) as runner:
        yield runner


@pytest.fixture
def client(runner):
    return runner.client


def stream_in(runner, channel):
    return Stream(platform=runner.platform, chat_id=channel)


async def test_a_429_in_typing_is_rate_limited_too(loose_api, runner, client):
    loose_api.inject_rate_limit(loose_api.general, 2.5)
    with pytest.raises(RateLimited) as caught:
        await client.on_stream_start(stream_in(runner, loose_api.general))
    assert caught.value.retry_after == 2.5


async def test_a_global_429_is_the_bots_limit(loose_api, runner, client):
    loose_api.inject_rate_limit(loose_api.general, 3.0, is_global=True)
    with pytest.raises(RateLimited, match="bot limit") as caught:
        await client.on_delta(stream_in(runner, loose_api.general), None, "hi")
    assert caught.value.retry_after == 3.0
    other = loose_api.text_channel()
    with pytest.raises(RateLimited):  # every channel waits: Discord is not asked during the window
        await client.on_delta(stream_in(runner, other), None, "elsewhere")
    assert loose_api.channel(other).calls == []
    if hasattr(caught.value, "scope"):
        assert caught.value.scope == "bot"


@pytest.mark.parametrize("status, code, message, retryable", [
    (403, 50013, "Missing Permissions", False),
    (403, 50001, "Missing Access", False),
    (400, 50035, "Invalid Form Body", False),
    (400, 30046, "Maximum number of edits to messages older than 1 hour reached. Try again later", False),
    (500, 0, "Internal Server Error", True),
    (503, 0, "Service Unavailable", True),
])
async def test_other_errors_say_whether_a_retry_can_help(loose_api, runner, client, status, code, message, retryable):
    loose_api.fail_next(loose_api.general, status, code, message)
    with pytest.raises(DeliveryError) as caught:
        await client.on_delta(stream_in(runner, loose_api.general), None, "hello")
    assert type(caught.value) is not RateLimited
    assert caught.value.retryable is retryable and caught.value.maybe_delivered is False
    assert len(loose_api.channel(loose_api.general).calls) == 1, "discord.py did not retry it by itself"
    assert loose_api.screen(loose_api.general) == []


async def test_a_502_may_have_landed(loose_api, runner, client):
    loose_api.fail_next(loose_api.general, 502, 0, "Bad Gateway")
    with pytest.raises(DeliveryError) as caught:
        await client.on_delta(stream_in(runner, loose_api.general), MessageRef(loose_api.general, "1"), "hello")
    assert caught.value.retryable and caught.value.maybe_delivered


async def test_an_edit_of_a_vanished_message_is_not_retried(loose_api, runner, client):
    with pytest.raises(DeliveryError, match="10008") as caught:
        await client.on_delta(stream_in(runner, loose_api.general), MessageRef(loose_api.general, "999"), "x")
    assert not caught.value.retryable


def test_timeouts_and_resets_may_have_landed_but_a_refused_connection_did_not():
    assert translate(asyncio.TimeoutError(), "edit message").maybe_delivered
    reset = translate(aiohttp.ServerDisconnectedError(), "create message")
    assert reset.retryable and reset.maybe_delivered
    refused = translate(aiohttp.ClientConnectorError(_Key(), OSError(111, "Connection refused")), "create message")
    assert refused.retryable and not refused.maybe_delivered


def test_a_refused_answer_keeps_its_retry_after():
    exc = translate(Refused(429, 0.25, is_global=False), "edit message")
    assert isinstance(exc, RateLimited) and exc.retry_after == 0.25


async def test_a_server_that_is_down_is_retryable():
    async with runner_for(None, settings=OFFLINE) as runner:
        with pytest.raises(DeliveryError) as caught:
            await runner.client.on_delta(Stream(platform=runner.platform, chat_id="1"), None, "hello")
    assert caught.value.retryable and not isinstance(caught.value, RateLimited)


class _Key:
    """What aiohttp's ClientConnectorError wants to describe the connection."""

    host, port, ssl = "127.0.0.1", 9, False


async def test_a_call_answered_too_late_may_have_landed(loose_api):
    """Discord carries out the send but answers after the plugin's call timeout: the core must reconcile."""
    async with runner_for(loose_api, call_timeout=0.3) as runner:
        await runner.client.discord_client()  # logged in: only the send itself is slow
        loose_api.delay_next(loose_api.general, 1.0)
        with pytest.raises(DeliveryError) as caught:
            await runner.client.on_delta(stream_in(runner, loose_api.general), None, "slow")
    assert caught.value.retryable and caught.value.maybe_delivered
    assert loose_api.screen(loose_api.general) == ["slow"], "it landed: resending blindly would duplicate it"
