"""``hermes-gateway run`` and ``ask`` as a user runs them: config file, the installed plugin, the emulator as Slack."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import yaml

from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, SlackEmulator
from slack_test_support import SECRETS, eventually


def write_config(tmp_path, base_url, **slack):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "streaming": {"slack": True},
        "platforms": {"slack": {"enabled": True, "bot_token": "${SLACK_BOT_TOKEN}", "app_token": "${SLACK_APP_TOKEN}",
                                "api_base_url": base_url, **slack}},
    }))
    return path


def environment(tmp_path):
    env = {**os.environ, "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_CONFIG", None)
    return env


def leaked(data: bytes) -> list[str]:
    return [s[:8] for s in SECRETS if s.encode() in data]


async def test_run_answers_slack_over_socket_mode_until_sigterm(api, tmp_path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(write_config(tmp_path, api.base_url)),
        env=environment(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 30)
        assert b"slack" in banner, banner
        await api.wait_connected(timeout=30)
        ts = await api.push_message("D0RUN", "echo: hello from Slack", kind="im")
        await eventually(lambda: api.screen("D0RUN", ts) == ["hello from Slack"] and not api.still_streaming(),
                         lambda: api.screen("D0RUN"))
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    assert leaked(banner + out + err) == []


async def test_run_with_an_app_token_slack_refuses_says_so_in_one_line(tmp_path):
    async with SlackEmulator(app_token="xapp-1-A0OTHER-0000000-a-different-app") as elsewhere:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "run", "--config",
            str(write_config(tmp_path, elsewhere.base_url)), env=environment(tmp_path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "platforms.slack.app_token" in lines[0], err
    assert leaked(out + err) == []


async def test_ask_streams_one_reply_into_a_slack_channel(api, tmp_path):
    api.channel("D0ASK", "im")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "ask", "--config", str(write_config(tmp_path, api.base_url)),
        "--platform", "slack", "--chat", "D0ASK", "echo: straight into Slack", env=environment(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert api.screen("D0ASK") == ["straight into Slack"]
    assert leaked(out + err) == []


def test_config_shows_no_secret_of_the_platform(tmp_path):
    """`hermes-gateway config` masks every secret field of SlackSettings, whatever the key is called."""
    path = write_config(tmp_path, "http://127.0.0.1:9/api/", mode="http",
                        signing_secret="${SLACK_SIGNING_SECRET}")
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                          env=environment(tmp_path), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode()
    assert "platforms:" in shown and "slack:" in shown and "http://127.0.0.1:9/api/" in shown, shown
    for key in ("bot_token", "app_token", "signing_secret"):
        assert f"    {key}: " in shown, f"{key} is listed (masked)"
    assert leaked(done.stdout + done.stderr) == []
