"""The bot token travels in every request header and in IDENTIFY; it must never reach a log line, an error,
or what ``hermes-gateway config`` shows."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
import yaml

from discord_test_support import MASK, OFFLINE, SECRET_PART, TOKEN, eventually, gateway_for, runner_for, section
from hermes_gateway import DeliveryError, Stream
from hermes_gateway.testing import PlatformRunner
from hermes_discord import DiscordPlugin
from hermes_discord.redaction import scrub


async def test_a_whole_conversation_at_debug_logs_no_token(loose_api, caplog):
    api = loose_api
    caplog.set_level(logging.DEBUG)
    config = {"model": {"demo": {"tokens_per_second": 0}},
              "streaming": {"discord": {"enabled": True, "edit_interval": 0.02, "min_tokens": 1}},
              "platforms": {"discord": {"enabled": True, **section(api)}}}
    dm = api.dm()
    api.fail_next(dm, 500, 0, f"something about Bot {TOKEN}")  # a server that echoes it; failures get logged
    async with gateway_for(api, config=config):
        await api.push_message(dm, "echo: hello")
        await eventually(lambda: api.screen(dm) == ["hello"], lambda: api.channel(dm).calls)
    gateway_lines = [r for r in caplog.records if r.name.startswith("discord.")]
    assert gateway_lines, "discord.py logged at DEBUG, so the filter had something to look at"
    assert SECRET_PART not in caplog.text


async def test_identify_at_debug_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    PlatformRunner(DiscordPlugin(), settings=OFFLINE).build()  # the gateway built a client: the token is known
    logging.getLogger("discord.gateway").debug("Sending %s", {"op": 2, "d": {"token": TOKEN}})
    assert MASK in caplog.text and SECRET_PART not in caplog.text


async def test_the_secret_part_alone_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    PlatformRunner(DiscordPlugin(), settings=OFFLINE).build()
    logging.getLogger("discord.http").debug("signature %s", SECRET_PART)
    assert MASK in caplog.text and SECRET_PART not in caplog.text


async def test_error_messages_never_quote_the_token(loose_api):
    loose_api.fail_next(loose_api.general, 400, 50035, f"Invalid Form Body near {TOKEN}")
    async with runner_for(loose_api) as runner:
        with pytest.raises(DeliveryError) as caught:
            await runner.client.on_delta(Stream(platform=runner.platform, chat_id=loose_api.general), None, "hi")
    assert SECRET_PART not in str(caught.value) and MASK in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__, "no chained discord.py text"


def test_config_and_reprs_keep_the_token_out():
    runner = PlatformRunner(DiscordPlugin(), settings=OFFLINE)
    client = runner.build()
    assert SECRET_PART not in repr(client.settings) and SECRET_PART not in repr(runner.platform)
    assert scrub(f"Authorization: Bot {TOKEN}") == f"Authorization: Bot {MASK}"


def test_a_token_in_a_traceback_is_masked(caplog):
    caplog.set_level(logging.DEBUG)
    PlatformRunner(DiscordPlugin(), settings=OFFLINE).build()
    try:
        raise RuntimeError(f"Improper token has been passed: {TOKEN}")
    except RuntimeError:
        logging.getLogger("discord.client").exception("login failed")
    assert "login failed" in caplog.text and SECRET_PART not in caplog.text


async def test_every_discord_logger_masks_the_token_even_deep_ones(loose_api, caplog):
    caplog.set_level(logging.DEBUG)
    async with runner_for(loose_api) as runner:
        await runner.client.discord_client()  # discord.py is imported and its loggers exist
    for name in ("discord.app_commands.tree", "discord.ext.tasks", "discord.voice_state", "discord.webhook.async_"):
        logging.getLogger(name).warning("token %s", TOKEN)
    assert caplog.text.count(MASK) == 4 and SECRET_PART not in caplog.text


def test_hermes_gateway_config_shows_no_secret_of_the_platform(tmp_path):
    """``hermes-gateway config`` masks the token because the settings type marks it secret (no hand-kept name)."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"platforms": {"discord": {"enabled": True, **OFFLINE, "require_mention": False}}}))
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_CONFIG", None)
    shown = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "api_base_url: http://127.0.0.1:9/api/v10" in shown.stdout, shown.stdout  # the section is shown ...
    assert "token: '***'" in shown.stdout, shown.stdout                              # ... its token masked
    output = shown.stdout + shown.stderr
    assert TOKEN not in output and SECRET_PART not in output and TOKEN.split(".")[0] not in output
