"""The bot token is in every Bot API URL; it must never reach a log line or an error message."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway import DeliveryError, Stream, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_telegram import TelegramPlugin, polling
from hermes_telegram.redaction import MASK, scrub
from telegram_test_support import SECRET_HALF, TOKEN, eventually, fast_plugin


async def test_a_whole_conversation_logs_no_token(api, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    plugin = fast_plugin(api.base_url)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"model": {"demo": {"tokens_per_second": 0}},
                        "streaming": {"telegram": {"enabled": True, "edit_interval": 0.02, "min_tokens": 1}},
                        "platforms": {"telegram": {"enabled": True, "token": TOKEN, "base_url": api.base_url,
                                                   "poll_timeout": 1}}}, env={})
    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.05)
    api.fail_method("getUpdates", 500, "Internal Server Error")  # failures get logged too
    async with Gateway(cfg, plugins):
        await api.push_message(42, "echo: hello")
        await eventually(lambda: api.screen(42) == ["hello"], lambda: api.chat(42).messages)
    requests = [r for r in caplog.records if r.name == "httpx" and "/sendMessage" in r.getMessage()]
    assert requests, "httpx logged its requests (with the URL), so the filter had something to hide"
    assert MASK in requests[0].getMessage()
    assert not leaks(caplog.text)


def leaks(text: str) -> bool:
    """Case-insensitive: PTB capitalizes error texts, which lowercases an echoed token."""
    return SECRET_HALF.lower() in text.lower()


async def test_error_messages_never_quote_the_token(api, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = fast_plugin(api.base_url)
    api.fail_next(5, 400, f"Bad Request: something about /bot{TOKEN}/sendMessage")  # a server that echoes it
    with pytest.raises(DeliveryError) as caught:
        await plugin.on_delta(Stream(platform=plugin.platform, chat_id="5"), None, "hi")
    await plugin.close()
    assert not leaks(str(caught.value)) and MASK in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__, "no chained PTB text"


def test_config_and_reprs_keep_the_token_out():
    plugin = TelegramPlugin(TOKEN, base_url="http://127.0.0.1:9/bot")
    assert not leaks(repr(plugin.settings)) and not leaks(repr(plugin.platform))
    assert scrub(f"GET https://api.telegram.org/bot{TOKEN}/getMe") == f"GET https://api.telegram.org/bot{MASK}/getMe"


def test_a_token_in_a_traceback_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    TelegramPlugin(TOKEN, base_url="http://127.0.0.1:9/bot")
    try:
        raise RuntimeError(f"The token `{TOKEN}` was rejected by the server.")  # PTB's own InvalidToken text
    except RuntimeError:
        logging.getLogger("telegram.Bot").exception("initialize failed")
    assert "initialize failed" in caplog.text and not leaks(caplog.text)
