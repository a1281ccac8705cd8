"""``hermes-gateway run`` as a user starts it: config file, the installed plugin, the emulator as Telegram."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import yaml

from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import SECRET_HALF, TOKEN, eventually


def write_config(tmp_path, base_url):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "streaming": {"telegram": True},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": base_url,
                                   "poll_timeout": 2}},
    }))
    return path


async def start(path):
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_run_answers_telegram_until_sigterm(api, tmp_path):
    process = await start(write_config(tmp_path, api.base_url))
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 30)
        assert b"platforms: telegram" in banner, banner
        await api.push_message(42, "echo: hello from Telegram")
        await eventually(lambda: api.screen(42) == ["hello from Telegram"], lambda: api.chat(42).messages)
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    assert b"stopped" in out
    assert SECRET_HALF.lower().encode() not in (banner + out + err).lower()
    assert api.pending_updates == 0


async def test_run_with_a_token_telegram_refuses_says_so_in_one_line(tmp_path):
    async with BotApiEmulator("555:" + "Q" * 35) as elsewhere:
        process = await start(write_config(tmp_path, elsewhere.base_url))
        out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "platforms.telegram.token" in lines[0], err
    assert SECRET_HALF.lower().encode() not in (out + err).lower()
