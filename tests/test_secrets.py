"""Secrets never reach a log line or an error text, whichever logger writes them."""

from __future__ import annotations

import logging

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.secrets import protect, protect_config, scrub


def test_a_protected_secret_is_masked_in_every_logger_and_in_tracebacks(caplog):
    token = "123456:AAsecretSECRETsecret"
    protect(token, mask="<bot-token>")
    caplog.set_level(logging.DEBUG)
    logging.getLogger("some.sdk.created.late").debug("POST https://api.example/bot%s/send", token)
    try:
        raise RuntimeError(f"Unauthorized: {token.lower()}")
    except RuntimeError:
        logging.getLogger("another").exception("call failed")
    assert "AAsecret" not in caplog.text and "aasecret" not in caplog.text.lower().replace("<bot-token>", "")
    assert "POST https://api.example/bot<bot-token>/send" in caplog.text
    assert scrub(f"error: {token}") == "error: <bot-token>"


def test_short_strings_are_not_treated_as_secrets():
    protect("abc", mask="<x>")
    assert scrub("abc abc") == "abc abc"


def test_the_config_keys_are_protected(caplog):
    config = parse_config({"model": {"base_url": "http://127.0.0.1:1/v1", "name": "m", "api_key": "sk-model-key-0001"},
                           "api_server": {"api_keys": ["client-key-0002"]}}, env={})
    protect_config(config)
    caplog.set_level(logging.INFO)
    logging.getLogger("httpx").info("Authorization: Bearer sk-model-key-0001 / client-key-0002")
    assert "sk-model-key-0001" not in caplog.text and "client-key-0002" not in caplog.text
    assert caplog.text.count("<api-key>") == 2


def test_credentials_inside_a_url_are_masked_in_every_log_line(caplog):
    parse_config({"model": {"base_url": "https://user:sk-inurl-0003@proxy.example/v1", "name": "m"}}, env={})
    caplog.set_level(logging.INFO)
    logging.getLogger("httpx").info('HTTP Request: POST https://user:sk-inurl-0003@proxy.example/v1/chat "200 OK"')
    assert "sk-inurl-0003" not in caplog.text and "proxy.example/v1/chat" in caplog.text
