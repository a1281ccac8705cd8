"""Bot API failures reach the core as RateLimited / DeliveryError with the right flags, never handled here."""

from __future__ import annotations

import datetime as dt
import logging

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


@pytest.mark.parametrize("transport", ["the plugin's", "httpx"])
async def test_a_real_read_timeout_is_ambiguous(api, transport):
    """The emulator answers too late for a short read timeout: the send may have landed (it did)."""
    import asyncio

    from telegram import Bot
    from telegram.request import HTTPXRequest

    from hermes_telegram.transport import bot_request

    client = fast_runner(api.base_url).client
    request = bot_request(read_timeout=0.2) if transport == "the plugin's" else HTTPXRequest(read_timeout=0.2)
    client._bot = Bot(TOKEN, base_url=api.base_url, request=request)
    original, answer = api._send_message, asyncio.Event()

    async def slow_send(params):
        result = await original(params)
        await answer.wait()  # until the gateway has given up waiting
        return result
    api._send_message = slow_send
    try:
        with pytest.raises(DeliveryError) as caught:
            await client.on_delta(stream_in(), None, "slow")
    finally:
        answer.set()
        await client.close()
    assert caught.value.retryable and caught.value.maybe_delivered
    assert api.chat(5).screen == ["slow"], "it landed: the core must reconcile, not resend"


async def test_a_reply_call_waits_for_a_late_answer_longer_than_ptbs_five_seconds(api):
    """A preview's first send answered late (Telegram stalled) is waited for: given up on, it may have landed, and
    the core, which then never learns the message's id, sends the final text anew below a partial copy with a
    cursor (``bench/scale.py --chats 300 --stall-emulator 5:7``: 16 chats showed the reply twice with PTB's 5 s,
    none with 20 s). Read from the bot the plugin builds, so a change of transport keeps the wait."""
    from hermes_telegram.transport import TEXT_READ_TIMEOUT

    client = fast_runner(api.base_url).client
    try:
        assert client.bot.request.read_timeout == TEXT_READ_TIMEOUT >= 15
    finally:
        await client.close()


async def test_a_connect_timeout_of_the_plugins_transport_was_not_sent():
    """A server whose accept queue is full never answers the connect: the call times out, and was not sent."""
    import asyncio
    import socket

    from telegram import Bot

    from hermes_telegram.transport import bot_request

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    address = listener.getsockname()
    waiting: list[socket.socket] = []
    try:
        for _ in range(8):  # fill the accept queue: Linux then drops the SYNs of further connects
            filler = socket.socket()
            filler.settimeout(0.2)
            waiting.append(filler)
            try:
                await asyncio.to_thread(filler.connect, address)
            except TimeoutError:
                break
        bot = Bot(TOKEN, base_url=f"http://127.0.0.1:{address[1]}/bot", request=bot_request())
        try:
            with pytest.raises(tg.TimedOut) as caught:
                await bot.send_message(5, "hi", connect_timeout=0.2)
        finally:
            await bot.shutdown()
    finally:
        for filler in waiting:
            filler.close()
        listener.close()
    exc = translate(caught.value, "sendMessage")
    assert exc.retryable and not exc.maybe_delivered


async def test_a_server_that_is_down_is_retryable():
    client = fast_runner("http://127.0.0.1:9/bot").client  # nothing listens
    try:
        with pytest.raises(DeliveryError) as caught:
            await client.on_delta(stream_in(), None, "hello")
    finally:
        await client.close()
    assert caught.value.retryable and not isinstance(caught.value, RateLimited)
    assert not caught.value.maybe_delivered, "no connection: nothing was sent"


def test_without_a_token_the_platform_is_not_built_and_the_error_says_so():
    from hermes_gateway.testing import PlatformRunner
    from hermes_telegram import plugin

    with pytest.raises(ConfigError, match="platforms.telegram.token: the bot token from @BotFather"):
        PlatformRunner(plugin, {"enabled": True}).build()


async def test_a_bot_dropped_without_shutdown_logs_nothing(api, caplog):
    """aiohttp logs "Unclosed client session" at ERROR when its session is collected open; a dropped bot must not
    put that into whatever log the collection happens to run in (httpx's transport never did)."""
    import gc

    from telegram import Bot

    from hermes_telegram.transport import bot_request

    bot = Bot(TOKEN, base_url=api.base_url, request=bot_request())
    await bot.send_message(5, "hello")
    del bot
    gc.collect()
    assert api.screen(5) == ["hello"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
