"""Tokens and the signing secret never appear in logs, errors or reprs, even at DEBUG."""

from __future__ import annotations

import logging

from hermes_gateway import Stream
from slack_test_support import SECRETS, eventually, gateway, runner


def assert_clean(text):
    for secret in SECRETS:
        assert secret not in text, "a secret leaked"


async def test_a_whole_conversation_at_debug_level_logs_no_secret(api, caplog):
    caplog.set_level(logging.DEBUG)
    api.fail_method("chat.update", "invalid_auth", times=1)
    async with gateway(api, tokens_per_second=100):
        await api.wait_connected()
        ts = await api.push_message("D0LOG", "echo: " + " ".join(["secret-free words"] * 20), kind="im")
        await eventually(lambda: api.screen("D0LOG", ts) and not api.still_streaming(), lambda: api.screen("D0LOG"))
    assert "apps.connections.open" in caplog.text and "chat." in caplog.text, "DEBUG logging was on"
    assert_clean(caplog.text)


async def test_http_mode_logs_no_secret(api, caplog):
    caplog.set_level(logging.DEBUG)
    running = gateway(api, mode="http")
    await running.start()
    try:
        api.events_url = running.url + "/webhooks/slack/events"
        await api.post_signed('{"type": "url_verification", "challenge": "c"}', signature="v0=bad")
        ts = await api.push_message("D0HLOG", "echo: fine", kind="im")
        await eventually(lambda: api.screen("D0HLOG", ts) == ["fine"], lambda: api.screen("D0HLOG"))
    finally:
        await running.stop()
    assert_clean(caplog.text)


async def test_errors_and_reprs_hold_no_secret(api):
    api.channel("D0ERR", "im")
    api.fail_method("chat.postMessage", "invalid_auth")
    async with runner(api) as slack:
        assert_clean(repr(slack.client.settings))
        stream = Stream(platform=slack.platform, chat_id="D0ERR", thread_id=None, chat_kind="im")
        try:
            await slack.client.on_stream_end(stream, None, "x")
        except Exception as exc:
            assert_clean(str(exc))
            assert "platforms.slack.bot_token" in str(exc)
        else:
            raise AssertionError("invalid_auth did not fail the call")
