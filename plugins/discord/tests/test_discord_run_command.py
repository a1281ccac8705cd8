"""``hermes-gateway run`` as a user starts it: config file, the installed plugin, the emulator as Discord."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import yaml

from discord_test_support import SECRET_PART, TOKEN, eventually


async def test_run_answers_on_discord_until_sigterm(loose_api, tmp_path):
    api = loose_api
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "streaming": {"discord": True},
        "platforms": {"discord": {"enabled": True, "token": "${DISCORD_TOKEN}", "api_base_url": api.api_base_url,
                                  "gateway_url": api.gateway_url}},
    }))
    env = {**os.environ, "DISCORD_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    dm = api.dm()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"platforms: discord" in banner, banner
        await api.wait_connected()
        await api.push_message(dm, "echo: hello from Discord")
        await eventually(lambda: api.screen(dm) == ["hello from Discord"], lambda: api.channel(dm).calls)
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert SECRET_PART not in (out + err).decode()
    assert b"voice will NOT be supported" not in err, "a text bot does not warn about voice libraries"


async def test_ask_answers_in_a_discord_channel_without_connecting_the_gateway(loose_api, tmp_path):
    """``hermes-gateway ask`` builds the client as ``run`` does and never starts it: REST only, no websocket."""
    api = loose_api
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "platforms": {"discord": {"enabled": True, "token": "${DISCORD_TOKEN}", "api_base_url": api.api_base_url,
                                  "gateway_url": api.gateway_url}},
    }))
    env = {**os.environ, "DISCORD_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    dm = api.dm()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "ask", "--platform", "discord", "--chat", dm, "--config", str(path),
        "echo: hello through ask", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert api.screen(dm) == ["hello through ask"]
    assert api.identifies == 0, "ask never connects the gateway websocket"
    assert SECRET_PART not in (out + err).decode()
    assert b"Unclosed" not in err, "the client was closed: no aiohttp session left open"
