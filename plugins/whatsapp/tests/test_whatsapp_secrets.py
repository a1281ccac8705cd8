"""The access token, the app secret and the verify token never reach a log line or an error message."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway import DeliveryError, Stream
from hermes_whatsapp.redaction import MASK, scrub
from whatsapp_test_support import SECRETS, USER, VERIFY_TOKEN, eventually, gateway_for, plugin_for, webhook_url


def leaks(text: str) -> list[str]:
    return [secret[:6] + "…" for secret in SECRETS if secret in text]


async def test_a_whole_conversation_logs_no_secret(meta, caplog):
    caplog.set_level(logging.DEBUG)
    gateway, _ = gateway_for(meta)
    async with gateway:
        url = webhook_url(gateway)
        assert (await meta.verify(url, VERIFY_TOKEN))[0] == 200
        assert (await meta.verify(url, VERIFY_TOKEN + "x"))[0] == 403
        assert await meta.deliver(url, meta.text_message(USER, "echo: psst"), secret="forged-secret") == 403
        meta.fail_next(USER, 131000, status=500)  # failures get logged too
        assert await meta.deliver(url, meta.text_message(USER, "echo: psst")) == 200
        await eventually(lambda: meta.screen(USER) == ["psst"], lambda: meta.calls, timeout=30)
        assert await meta.deliver(url, meta.status_update("wamid.x", "failed", USER,
                                                          errors=[{"code": 131026, "title": "Undeliverable"}])) == 200
    assert caplog.records, "something was logged, so there was something to leak"
    assert leaks(caplog.text) == []


async def test_an_error_text_that_echoes_the_token_is_masked(meta):
    plugin = plugin_for(meta)
    token = plugin.settings.access_token
    meta.fail_next(USER, 100, message=f"(#100) Invalid parameter access_token={token}")  # a server that echoes it
    with pytest.raises(DeliveryError) as caught:
        await plugin.on_stream_end(Stream(platform=plugin.platform, chat_id=USER), None, "hi")
    await plugin.close()
    assert leaks(str(caught.value)) == [] and MASK in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_reprs_and_tracebacks_keep_secrets_out(meta, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = plugin_for(meta)
    assert leaks(repr(plugin.settings)) == [] and leaks(repr(plugin.platform)) == []
    assert scrub(f"Authorization: Bearer {SECRETS[0]}") == f"Authorization: Bearer {MASK}"
    try:
        raise RuntimeError(f"hub.verify_token={VERIFY_TOKEN} was wrong")
    except RuntimeError:
        logging.getLogger("hermes_whatsapp.plugin").exception("handshake failed")
    assert "handshake failed" in caplog.text and leaks(caplog.text) == []
