"""``hermes-gateway run`` as a user runs it: a config file, the installed plugin, the emulator as Teams."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys

import yaml

from hermes_teams.emulator import APP_PASSWORD, TeamsEmulator
from teams_test_support import eventually


def write_config(tmp_path, api: TeamsEmulator, **teams):
    path = tmp_path / "config.yaml"
    section = {**api.settings(), "app_password": "${TEAMS_APP_PASSWORD}", **teams}
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": 0},
        "streaming": {"teams": True},
        "platforms": {"teams": {"enabled": True, **section}},
    }))
    return path


def environment(tmp_path, password=APP_PASSWORD):
    env = {**os.environ, "TEAMS_APP_PASSWORD": password, "HERMES_HOME": str(tmp_path / "home"),
           "HERMES_LOAD_PLUGINS": "teams"}
    env.pop("HERMES_CONFIG", None)
    return env


async def test_run_answers_a_personal_chat_until_sigterm(api, tmp_path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(write_config(tmp_path, api)),
        env=environment(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"teams" in banner, banner
        listening = re.search(rb"listening on (http://127\.0\.0\.1:\d+)", banner)
        assert listening, banner
        api.bot_url = listening.group(1).decode() + "/api/messages"
        await api.send("a:run", "echo: hello from Teams")
        await eventually(lambda: api.screen("a:run") == ["hello from Teams"] and not api.still_streaming(),
                         lambda: api.screen("a:run"), timeout=30)
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    assert APP_PASSWORD.encode() not in banner + out + err
    assert not any(token.encode() in banner + out + err for token in api.tokens)


async def test_run_with_a_password_the_token_service_refuses_says_so_in_one_line(api, tmp_path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(write_config(tmp_path, api)),
        env=environment(tmp_path, password="wrong-secret-0123456789"), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "platforms.teams.app_password" in lines[0], err
    assert b"wrong-secret-0123456789" not in out + err


def test_config_shows_no_secret(api, tmp_path):
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config",
                           str(write_config(tmp_path, api))], env=environment(tmp_path), capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode()
    assert "teams:" in shown and "app_password: " in shown and api.app_id in shown
    assert APP_PASSWORD not in shown + done.stderr.decode()
