"""The bot token is in every Bot API URL; it must never reach a log line, an error message or `config` output."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
import yaml

from hermes_gateway import DeliveryError, Stream
from hermes_telegram import PLATFORM, polling
from hermes_telegram.redaction import MASK, scrub
from telegram_test_support import SECRET_HALF, TOKEN, eventually, fast_runner, gateway_for

WEBHOOK_SECRET = "s3cret-Webhook_token-0123456789"


async def test_a_whole_conversation_logs_no_token(api, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(polling, "BACKOFF_FIRST", 0.05)
    api.fail_method("getUpdates", 500, "Internal Server Error")  # failures get logged too
    gateway = gateway_for(api.base_url, tokens_per_second=0, poll_timeout=1,
                          streaming={"enabled": True, "edit_interval": 0.02, "min_tokens": 1})
    async with gateway:
        await api.push_message(42, "echo: hello")
        await eventually(lambda: api.screen(42) == ["hello"], lambda: api.chat(42).messages)
    # (getUpdates goes through httpx, which logs each request's URL; the reply's calls through aiohttp, which does not)
    requests = [r for r in caplog.records if r.name == "httpx" and "/getUpdates" in r.getMessage()]
    assert requests, "httpx logged its requests (with the URL), so the filter had something to hide"
    assert MASK in requests[0].getMessage()
    assert not leaks(caplog.text)


def leaks(text: str) -> bool:
    """Case-insensitive: PTB capitalizes error texts, which lowercases an echoed token."""
    return SECRET_HALF.lower() in text.lower()


async def test_error_messages_never_quote_the_token(api, caplog):
    caplog.set_level(logging.DEBUG)
    client = fast_runner(api.base_url).client
    api.fail_next(5, 400, f"Bad Request: something about /bot{TOKEN}/sendMessage")  # a server that echoes it
    with pytest.raises(DeliveryError) as caught:
        await client.on_delta(Stream(platform=PLATFORM, chat_id="5"), None, "hi")
    await client.close()
    assert not leaks(str(caught.value)) and MASK in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__, "no chained PTB text"


async def test_an_error_quoting_only_the_tokens_secret_half_is_masked(api):
    """The core masks the whole token (a secret() field); the plugin adds the half after the colon."""
    client = fast_runner(api.base_url).client
    api.fail_next(5, 400, f"Bad Request: token part {SECRET_HALF} refused")
    with pytest.raises(DeliveryError) as caught:
        await client.on_delta(Stream(platform=PLATFORM, chat_id="5"), None, "hi")
    await client.close()
    assert not leaks(str(caught.value)) and MASK in str(caught.value)


def test_config_and_reprs_keep_the_token_out():
    runner = fast_runner("http://127.0.0.1:9/bot", mode="webhook", webhook_secret=WEBHOOK_SECRET,
                         webhook_url="https://bot.example.com/webhooks/telegram")
    shown = repr(runner.client.settings) + repr(PLATFORM) + repr(runner.client.context)
    assert not leaks(shown) and WEBHOOK_SECRET not in shown
    assert scrub(f"GET https://api.telegram.org/bot{TOKEN}/getMe") == f"GET https://api.telegram.org/bot{MASK}/getMe"
    assert WEBHOOK_SECRET not in scrub(f"secret_token={WEBHOOK_SECRET}")


def test_a_token_in_a_traceback_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    fast_runner("http://127.0.0.1:9/bot")
    try:
        raise RuntimeError(f"The token `{TOKEN}` was rejected by the server.")  # PTB's own InvalidToken text
    except RuntimeError:
        logging.getLogger("telegram.Bot").exception("initialize failed")
    assert "initialize failed" in caplog.text and not leaks(caplog.text)


def test_hermes_gateway_config_shows_no_secret_of_the_platform(tmp_path):
    """``hermes-gateway config`` masks every field the settings type marks secret(): the token, the webhook secret."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"platforms": {"telegram": {
        "enabled": True, "token": TOKEN, "base_url": "http://127.0.0.1:9/bot", "mode": "webhook",
        "webhook_url": "https://bot.example.com/webhooks/telegram", "webhook_secret": WEBHOOK_SECRET}}}))
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_CONFIG", None)
    shown = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "https://bot.example.com/webhooks/telegram" in shown.stdout, shown.stdout  # the section is there
    output = shown.stdout + shown.stderr
    assert not leaks(output) and WEBHOOK_SECRET not in output, shown.stdout
