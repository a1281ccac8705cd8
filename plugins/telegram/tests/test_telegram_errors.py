"""Bot API failures reach the core as RateLimited / DeliveryError with the right flags, never handled here."""

from __future__ import annotations

import datetime as dt

import httpx
import pytest
from telegram import error as tg

from hermes_gateway import ConfigError, DeliveryError, MessageRef, RateLimited, Stream
from hermes_telegram.errors import translate
from hermes_telegram import PLATFORM
from telegram_test_support import TOKEN, fast_runner


@pytest.fixture
async def client(api):
    client = fast_runner(api.base_url).client
    yield client
    await client.close()


def stream_in(chat_id="5"):
    return Stream(platform=PLATFORM, chat_id=chat_id)


async def raised_by(client, hook, api, code, description, parameters=None, message=None):
    api.fail_next(5, code, description, parameters)
    with pytest.raises(DeliveryError) as caught:
        if hook == "typing":
            await client.on_stream_start(stream_in())
        else:
            await client.on_delta(stream_in(), message, "hello")
    return caught.value


async def test_flood_control_becomes_rate_limited_with_its_seconds(api, client):
    exc = await raised_by(client, "send", api, 429, "Too Many Requests: retry after 35", {"retry_after": 35})
    assert isinstance(exc, RateLimited) and exc.retry_after == 35.0 and exc.retryable
    exc = await raised_by(client, "typing", api, 429, "Too Many Requests: retry after 2", {"retry_after": 2})
    assert isinstance(exc, RateLimited) and exc.retry_after == 2.0


def test_a_timedelta_retry_after_is_seconds():
    exc = translate(tg.RetryAfter(dt.timedelta(seconds=2.5)), "sendMessage")
    assert isinstance(exc, RateLimited) and exc.retry_after == 2.5


async def test_not_modified_is_success(api, client):
    ref = await client.on_delta(stream_in(), None, "same")
    assert await client.on_stream_end(stream_in(), ref, "same") == ref
    assert api.chat(5).calls[-1].outcome == "not_modified"


@pytest.mark.parametrize("code, description, retryable", [
    (403, "Forbidden: bot was blocked by the user", False),
    (400, "Bad Request: chat not found", False),
    (400, "Bad Request: message to edit not found", False),
    (500, "Internal Server Error", True),
    (502, "Bad Gateway", True),
])
async def test_other_errors_say_whether_a_retry_can_help(api, client, code, description, retryable):
    exc = await raised_by(client, "send", api, code, description)
    assert type(exc) is DeliveryError
    assert exc.retryable is retryable and exc.maybe_delivered is False
    assert description.split(": ")[-1].lower() in str(exc).lower()
    assert api.chat(5).screen == []


async def test_an_edit_of_a_vanished_message_is_not_retried(api, client):
    gone = MessageRef("5", "999")
    exc = await raised_by(client, "edit", api, 400, "Bad Request: message to edit not found", message=gone)
    assert not exc.retryable


def test_a_timeout_after_sending_may_have_landed_but_one_before_did_not():
    read = tg.TimedOut()
    read.__cause__ = httpx.ReadTimeout("timed out")
    exc = translate(read, "editMessageText")
    assert exc.retryable and exc.maybe_delivered
    connect = tg.TimedOut()
    connect.__cause__ = httpx.ConnectTimeout("timed out")
    exc = translate(connect, "sendMessage")
    assert exc.retryable and not exc.maybe_delivered


async def test_a_real_read_timeout_is_ambiguous(api):
    """The emulator answers too late for a short read timeout: the send may have landed (it did)."""
    import asyncio

    from telegram import Bot
    from telegram.request import HTTPXRequest

    client = fast_runner(api.base_url).client
    client._bot = Bot(TOKEN, base_url=api.base_url, request=HTTPXRequest(read_timeout=0.2))
    original = api._send_message

    async def slow_send(params):
        result = await original(params)
        await asyncio.sleep(1.0)
        return result
    api._send_message = slow_send
    try:
        with pytest.raises(DeliveryError) as caught:
            await client.on_delta(stream_in(), None, "slow")
    finally:
        await client.close()
    assert caught.value.retryable and caught.value.maybe_delivered
    assert api.chat(5).screen == ["slow"], "it landed: the core must reconcile, not resend"


async def test_a_server_that_is_down_is_retryable():
    client = fast_runner("http://127.0.0.1:9/bot").client  # nothing listens
    try:
        with pytest.raises(DeliveryError) as caught:
            await client.on_delta(stream_in(), None, "hello")
    finally:
        await client.close()
    assert caught.value.retryable and not isinstance(caught.value, RateLimited)


def test_without_a_token_the_platform_is_not_built_and_the_error_says_so():
    from hermes_gateway.testing import PlatformRunner
    from hermes_telegram import plugin

    with pytest.raises(ConfigError, match="platforms.telegram.token: the bot token from @BotFather"):
        PlatformRunner(plugin, {"enabled": True}).build()
