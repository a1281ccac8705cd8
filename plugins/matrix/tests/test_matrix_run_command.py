"""``hermes-gateway run`` as a user runs it: a config file, the installed plugin, a real Synapse as the homeserver."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest
import yaml

import hermes_matrix
from hermes_gateway.testing import TestGateway
from matrix_synapse_server import Account
from matrix_test_support import Person, gateway_config, until
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


async def test_a_token_the_homeserver_refuses_stops_the_start_in_one_line(synapse):
    """In process (a subprocess costs seconds of CPU for the same line): the start-up error names the key."""
    refused = "syt_not_a_token_of_this_server_0000"
    config = gateway_config(synapse.url, Account("@nobody:localhost", refused, ""))
    with pytest.raises(Exception) as caught:
        async with TestGateway(config, hermes_matrix.plugin):
            pass
    message = str(caught.value)
    assert "platforms.matrix.access_token" in message and "\n" not in message, message
    assert refused not in message
