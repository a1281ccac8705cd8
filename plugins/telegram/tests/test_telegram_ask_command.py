"""``hermes-gateway ask --platform telegram``: one turn into a Telegram chat, the plugin configured by startup."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from telegram_test_support import SECRET_HALF, TOKEN


async def test_ask_streams_one_reply_into_a_telegram_chat(api, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "streaming": {"telegram": True},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url}},
    }))
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "ask", "--config", str(path), "--platform", "telegram",
        "--chat", "777", "echo: straight into Telegram", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert api.screen(777) == ["straight into Telegram"]
    assert SECRET_HALF not in (out + err).decode()


async def test_show_calls_prints_every_call_into_a_third_party_platform(api, tmp_path):
    """``--show-calls`` is not the reference platform's alone: each call into Telegram is one stderr line."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "streaming": {"telegram": True},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": api.base_url}},
    }))
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "ask", "--config", str(path), "--platform", "telegram",
        "--chat", "778", "--show-calls", "echo: every call shown", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    lines = [line for line in err.decode().splitlines() if line.startswith("[+")]
    assert lines and lines[-1].endswith(" ok] 'every call shown'"), err.decode()
    assert " on_stream_end " in lines[-1]
    assert api.screen(778) == ["every call shown"]
