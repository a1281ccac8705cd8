"""Tokens and the signing secret never appear in logs, errors or reprs, even at DEBUG."""

from __future__ import annotations

import logging

from hermes_gateway import Stream
from hermes_slack import SlackPlugin, parse_settings
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET
from slack_test_support import SECRETS, eventually, fast_gateway, fast_plugin


def assert_clean(text):
    for secret in SECRETS:
        assert secret not in text, "a secret leaked"


async def test_a_whole_conversation_at_debug_level_logs_no_secret(api, caplog):
    caplog.set_level(logging.DEBUG)
    api.fail_method("chat.update", "invalid_auth", times=1)
    gateway, _ = fast_gateway(api, tokens_per_second=100)
    async with gateway:
        await api.wait_connected()
        ts = await api.push_message("D0LOG", "echo: " + " ".join(["secret-free words"] * 20), kind="im")
        await eventually(lambda: api.screen("D0LOG", ts) and not api.still_streaming(), lambda: api.screen("D0LOG"))
    assert "apps.connections.open" in caplog.text and "chat." in caplog.text, "DEBUG logging was on"
    assert_clean(caplog.text)


async def test_http_mode_logs_no_secret(api, caplog):
    caplog.set_level(logging.DEBUG)
    gateway, _ = fast_gateway(api, mode="http")
    await gateway.start()
    try:
        api.events_url = gateway.url + "/webhooks/slack/events"
        await api.post_signed('{"type": "url_verification", "challenge": "c"}', signature="v0=bad")
        ts = await api.push_message("D0HLOG", "echo: fine", kind="im")
        await eventually(lambda: api.screen("D0HLOG", ts) == ["fine"], lambda: api.screen("D0HLOG"))
    finally:
        await gateway.stop()
    assert_clean(caplog.text)


async def test_errors_and_reprs_hold_no_secret(api):
    settings = parse_settings({"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": SIGNING_SECRET})
    assert_clean(repr(settings))
    plugin = fast_plugin(api)
    api.fail_method("chat.postMessage", "invalid_auth")
    stream = Stream(platform=plugin.platform, chat_id="D0ERR", thread_id=None, chat_kind="im")
    api.channel("D0ERR", "im")
    try:
        await plugin.on_stream_end(stream, None, "x")
    except Exception as exc:
        assert_clean(str(exc))
        assert "platforms.slack.bot_token" in str(exc)
    else:
        raise AssertionError("invalid_auth did not fail the call")
    finally:
        await plugin.close()
    assert_clean(repr(SlackPlugin(BOT_TOKEN, app_token=APP_TOKEN).settings))
