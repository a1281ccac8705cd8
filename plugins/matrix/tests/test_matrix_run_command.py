"""``hermes-gateway run`` as a user runs it: a config file, the installed plugin, a real Synapse as the homeserver."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import yaml

from matrix_test_support import Person, until
from test_matrix_gateway import direct_chat


def write_config(tmp_path, url, user_id, **matrix):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "streaming": {"matrix": True},
        "platforms": {"matrix": {"enabled": True, "homeserver": url, "user_id": user_id, "sync_timeout": 1,
                                 **matrix}},
    }))
    return path


def environment(tmp_path, **secrets):
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home"), **secrets}
    env.pop("HERMES_CONFIG", None)
    return env


async def test_run_answers_a_direct_chat_until_sigterm(synapse, tmp_path):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    config = write_config(tmp_path, synapse.url, bot.user_id, password="${MATRIX_PASSWORD}")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config),
        env=environment(tmp_path, MATRIX_PASSWORD=bot.password),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"matrix" in banner, banner
        room = await direct_chat(person, bot)
        await person.send(room, "echo: hello from Matrix")
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == ["hello from Matrix"])
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await person.close()
    assert process.returncode == 0, err
    assert bot.password.encode() not in banner + out + err


async def test_run_with_a_token_the_homeserver_refuses_says_so_in_one_line(synapse, tmp_path):
    refused = "syt_not_a_token_of_this_server_0000"
    config = write_config(tmp_path, synapse.url, "@nobody:localhost", access_token="${MATRIX_ACCESS_TOKEN}")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config),
        env=environment(tmp_path, MATRIX_ACCESS_TOKEN=refused),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "platforms.matrix.access_token" in lines[0], err
    assert refused.encode() not in out + err


def test_config_shows_no_secret_of_the_platform(tmp_path):
    """`hermes-gateway config` masks access_token and password."""
    config = write_config(tmp_path, "http://127.0.0.1:9", "@bot:localhost", access_token="${MATRIX_ACCESS_TOKEN}")
    token = "syt_a_secret_token_of_the_bot_1234"
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(config)],
                          env=environment(tmp_path, MATRIX_ACCESS_TOKEN=token), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode()
    assert "matrix:" in shown and "    access_token: " in shown and "http://127.0.0.1:9" in shown, shown
    assert token.encode() not in done.stdout + done.stderr
