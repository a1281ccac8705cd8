"""``hermes-gateway doctor`` with Telegram: the emulator as Telegram; a wrong token is one ✗ line with the fix."""

from __future__ import annotations

import asyncio
import os
import sys

import yaml

from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import SECRET_HALF, TOKEN


async def doctor(tmp_path, section: dict) -> tuple[int, list[str]]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "api_server": {"port": 0}, "store": {"path": str(tmp_path / "state.db")},
        "media": {"directory": str(tmp_path / "media")},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", **section}},
    }))
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "doctor", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert SECRET_HALF.lower() not in (out + err).decode().lower()
    assert err == b"", err
    return process.returncode, out.decode().splitlines()


async def test_doctor_says_the_token_works(api, tmp_path):
    code, lines = await doctor(tmp_path, {"base_url": api.base_url})
    assert code == 0, lines
    assert "✓ platforms.telegram: token accepted (getMe: @" in "\n".join(lines)
    assert any(method == "getMe" for method, _ in api.requests)


async def test_doctor_finds_a_wrong_token_in_one_line_with_the_fix(tmp_path):
    async with BotApiEmulator("555:" + "Q" * 35) as elsewhere:  # a Telegram that knows another token: 401
        code, lines = await doctor(tmp_path, {"base_url": elsewhere.base_url})
    assert code == 1
    failing = [line for line in lines if line.startswith("✗")]
    assert failing == ["✗ platforms.telegram: token: Telegram refused it (getMe answered 401 Unauthorized): copy "
                       "the token again from @BotFather (/mybots > API Token) into platforms.telegram.token"], lines


async def test_doctor_checks_the_webhook_is_https(api, tmp_path):
    code, lines = await doctor(tmp_path, {"base_url": api.base_url, "mode": "webhook",
                                          "webhook_url": "http://bot.example.com/webhooks/telegram",
                                          "webhook_secret": "s3cret-path-token"})
    assert code == 1
    assert [line for line in lines if line.startswith("✗")] == [
        "✗ platforms.telegram: webhook_url http://bot.example.com/webhooks/telegram is not https: Telegram posts "
        "only to https URLs (put the gateway behind a TLS proxy, docs/deploy.md)"], lines
