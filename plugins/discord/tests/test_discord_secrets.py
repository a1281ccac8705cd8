"""The bot token travels in every request header and in IDENTIFY; it must never reach a log line or an error."""

from __future__ import annotations

import logging

import pytest

from discord_test_support import SECRET_PART, TOKEN, eventually, fast_plugin
from hermes_gateway import DeliveryError, Stream, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_discord import DiscordPlugin
from hermes_discord.redaction import MASK, scrub


async def test_a_whole_conversation_at_debug_logs_no_token(loose_api, caplog):
    api = loose_api
    caplog.set_level(logging.DEBUG)
    plugin = fast_plugin(api)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    cfg = parse_config({"model": {"demo": {"tokens_per_second": 0}},
                        "streaming": {"discord": {"enabled": True, "edit_interval": 0.02, "min_tokens": 1}},
                        "platforms": {"discord": {"enabled": True, "token": TOKEN, "api_base_url": api.api_base_url,
                                                  "gateway_url": api.gateway_url}}}, env={})
    dm = api.dm()
    api.fail_next(dm, 500, 0, f"something about Bot {TOKEN}")  # a server that echoes it; failures get logged
    async with Gateway(cfg, plugins):
        await api.push_message(dm, "echo: hello")
        await eventually(lambda: api.screen(dm) == ["hello"], lambda: api.channel(dm).calls)
    gateway_lines = [r for r in caplog.records if r.name.startswith("discord.")]
    assert gateway_lines, "discord.py logged at DEBUG, so the filter had something to look at"
    assert SECRET_PART not in caplog.text


async def test_identify_at_debug_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    DiscordPlugin(TOKEN, api_base_url="http://127.0.0.1:9/api/v10", gateway_url="ws://127.0.0.1:9/ws")
    logging.getLogger("discord.gateway").debug("Sending %s", {"op": 2, "d": {"token": TOKEN}})
    assert MASK in caplog.text and SECRET_PART not in caplog.text


async def test_error_messages_never_quote_the_token(loose_api):
    plugin = fast_plugin(loose_api)
    loose_api.fail_next(loose_api.general, 400, 50035, f"Invalid Form Body near {TOKEN}")
    with pytest.raises(DeliveryError) as caught:
        await plugin.on_delta(Stream(platform=plugin.platform, chat_id=loose_api.general), None, "hi")
    await plugin.close()
    assert SECRET_PART not in str(caught.value) and MASK in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__, "no chained discord.py text"


def test_config_and_reprs_keep_the_token_out():
    plugin = DiscordPlugin(TOKEN, api_base_url="http://127.0.0.1:9/api/v10", gateway_url="ws://127.0.0.1:9/ws")
    assert SECRET_PART not in repr(plugin.settings) and SECRET_PART not in repr(plugin.platform)
    assert scrub(f"Authorization: Bot {TOKEN}") == f"Authorization: Bot {MASK}"


def test_a_token_in_a_traceback_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    DiscordPlugin(TOKEN, api_base_url="http://127.0.0.1:9/api/v10", gateway_url="ws://127.0.0.1:9/ws")
    try:
        raise RuntimeError(f"Improper token has been passed: {TOKEN}")
    except RuntimeError:
        logging.getLogger("discord.client").exception("login failed")
    assert "login failed" in caplog.text and SECRET_PART not in caplog.text


async def test_every_discord_logger_masks_the_token_even_deep_ones(loose_api, caplog):
    caplog.set_level(logging.DEBUG)
    plugin = fast_plugin(loose_api)
    await plugin.client()  # discord.py is imported and its loggers exist
    await plugin.close()
    for name in ("discord.app_commands.tree", "discord.ext.tasks", "discord.voice_state", "discord.webhook.async_"):
        logging.getLogger(name).warning("token %s", TOKEN)
    assert caplog.text.count(MASK) == 4 and SECRET_PART not in caplog.text
