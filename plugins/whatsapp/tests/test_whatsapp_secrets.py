"""The access token, the app secret and the verify token never reach a log line or an error message."""

from __future__ import annotations

import logging

import pytest

from hermes_gateway import DeliveryError, Stream
from hermes_whatsapp import PLATFORM
from hermes_whatsapp.redaction import scrub
from whatsapp_test_support import PHONE_ID, SECRETS, USER, VERIFY_TOKEN, eventually, gateway_for, plugin_for, webhook_url


def leaks(text: str) -> list[str]:
    return [secret[:6] + "…" for secret in SECRETS if secret in text]


async def test_a_whole_conversation_logs_no_secret(meta, caplog):
    caplog.set_level(logging.DEBUG)
    gateway = gateway_for(meta)
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
        await plugin.on_stream_end(Stream(platform=PLATFORM, chat_id=USER), None, "hi")
    await plugin.close()
    assert leaks(str(caught.value)) == [] and "<secret>" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_reprs_and_tracebacks_keep_secrets_out(meta, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = plugin_for(meta)
    assert leaks(repr(plugin.settings)) == [] and leaks(repr(PLATFORM)) == []
    assert scrub(f"Authorization: Bearer {SECRETS[0]}") == "Authorization: Bearer <secret>"
    try:
        raise RuntimeError(f"hub.verify_token={VERIFY_TOKEN} was wrong")
    except RuntimeError:
        logging.getLogger("hermes_whatsapp.plugin").exception("handshake failed")
    assert "handshake failed" in caplog.text and leaks(caplog.text) == []


def test_hermes_gateway_config_shows_no_secret_of_the_platform(meta, tmp_path):
    """``hermes-gateway config`` masks every field the settings type marks secret (none is a hand-kept name)."""
    import os
    import subprocess
    import sys

    import yaml

    from whatsapp_test_support import section

    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"platforms": {"whatsapp": section(meta)}}))
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home"), "HERMES_LOAD_PLUGINS": "whatsapp"}
    shown = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "phone_number_id" in shown.stdout and PHONE_ID in shown.stdout, shown.stdout
    assert leaks(shown.stdout + shown.stderr) == [], shown.stdout
