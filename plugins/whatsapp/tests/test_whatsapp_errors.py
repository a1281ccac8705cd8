"""What the core hears when the Graph API refuses a call: the stream hooks against the emulator."""

from __future__ import annotations

import pytest

from hermes_gateway import DeliveryError, RateLimited, Stream
from hermes_whatsapp.errors import GraphError, PairBackoff, translate
from hermes_whatsapp import PLATFORM
from whatsapp_test_support import USER, plugin_for


async def send(plugin, text="hello", chat=USER):
    return await plugin.on_stream_end(Stream(platform=PLATFORM, chat_id=chat), None, text)


async def test_131056_waits_4s_then_doubles_and_resets_after_a_send(meta):
    plugin = plugin_for(meta)
    waits = []
    for _ in range(3):
        meta.inject_pair_rate_limit(USER)
        with pytest.raises(RateLimited) as caught:
            await send(plugin)
        waits.append(caught.value.retry_after)
        assert getattr(caught.value, "scope", "chat") == "chat", "only this user's chat waits"
        assert "131056" in str(caught.value)
    assert waits == [4.0, 8.0, 16.0]
    await send(plugin)  # got through: the next pair limit starts from 4 s again
    meta.inject_pair_rate_limit(USER)
    with pytest.raises(RateLimited) as caught:
        await send(plugin)
    assert caught.value.retry_after == 4.0
    meta.inject_pair_rate_limit("447700900123")  # another user has a wait of their own
    with pytest.raises(RateLimited) as caught:
        await send(plugin, chat="447700900123")
    assert caught.value.retry_after == 4.0
    await plugin.close()
    assert meta.screen(USER) == ["hello"]


async def test_130429_stops_every_chat_of_the_number(meta):
    plugin = plugin_for(meta)
    meta.fail_any_call(130429)
    with pytest.raises(RateLimited) as caught:
        await send(plugin)
    await plugin.close()
    assert caught.value.scope == "bot" and caught.value.retry_after > 0
    assert meta.screen(USER) == []


@pytest.mark.parametrize("code, words", [
    (131047, "24 hours"),
    (131026, "Undeliverable"),
    (131048, "131048"),
    (100, "Invalid"),
])
async def test_permanent_codes_are_not_retried(meta, code, words):
    plugin = plugin_for(meta)
    meta.fail_next(USER, code, message="(#100) Invalid parameter" if code == 100 else "")
    with pytest.raises(DeliveryError) as caught:
        await send(plugin)
    await plugin.close()
    assert not isinstance(caught.value, RateLimited)
    assert caught.value.retryable is False and caught.value.code == code
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("status, code", [(500, 1), (503, 2), (400, 131000), (502, None)])
async def test_server_trouble_is_retryable_and_not_delivered(meta, status, code):
    plugin = plugin_for(meta)
    meta.fail_any_call(code if code is not None else 0, status=status)
    with pytest.raises(DeliveryError) as caught:
        await send(plugin)
    await plugin.close()
    assert caught.value.retryable and not caught.value.maybe_delivered
    assert not isinstance(caught.value, RateLimited)


async def test_a_timed_out_send_may_have_landed(meta):
    plugin = plugin_for(meta, timeout=1.0)
    meta.fail_next(USER, 131000, delay=1.5)  # Meta answers too late
    with pytest.raises(DeliveryError) as caught:
        await send(plugin)
    await plugin.close()
    assert caught.value.retryable and caught.value.maybe_delivered, "the core must reconcile, not blindly resend"


async def test_an_unreachable_server_is_retryable_and_not_delivered(meta):
    plugin = plugin_for(meta)
    await meta.stop()  # nobody listens on that port any more
    with pytest.raises(DeliveryError) as caught:
        await send(plugin)
    await plugin.close()
    assert caught.value.retryable and not caught.value.maybe_delivered


async def test_a_rejected_token_says_which_key(meta):
    plugin = plugin_for(meta, access_token="EAAwrongwrongwrong")
    with pytest.raises(DeliveryError) as caught:
        await send(plugin)
    await plugin.close()
    assert not caught.value.retryable and "platforms.whatsapp.access_token" in str(caught.value)


async def test_an_edit_is_refused_so_the_core_sends_anew(meta):
    plugin = plugin_for(meta)
    stream = Stream(platform=PLATFORM, chat_id=USER)
    ref = await plugin.on_stream_end(stream, None, "first")
    assert plugin.supports_edit(stream) is False
    with pytest.raises(DeliveryError) as caught:
        await plugin.on_stream_end(stream, ref, "first, edited")
    await plugin.close()
    assert caught.value.retryable is False
    assert meta.screen(USER) == ["first"]


def test_the_platform_asks_for_no_typing_refresh_within_20s():
    """WhatsApp's indicator lasts 25 s: the core refreshes it no sooner than the platform declares."""
    from hermes_whatsapp.plugin import TYPING_REFRESH

    assert PLATFORM.typing_interval == TYPING_REFRESH == 20.0


def test_translation_without_an_error_body():
    pairs = PairBackoff()
    assert translate(GraphError.parse(502, None), "send", USER, pairs).retryable
    assert not translate(GraphError.parse(403, {"error": "nope"}), "send", USER, pairs).retryable
    limited = translate(GraphError.parse(429, {}), "send", USER, pairs, retry_after_header="3")
    assert isinstance(limited, RateLimited) and limited.retry_after == 3.0

