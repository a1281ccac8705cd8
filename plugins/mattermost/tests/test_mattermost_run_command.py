"""``hermes-gateway run`` as a user runs it: a config file, the installed plugin, the emulator as Mattermost.

It answers a direct message with the demo model; SIGTERM with a long reply
in flight exits 0 within the grace, what was shown stays and no post keeps
the cursor; a token the server refuses stops start-up in one line naming
the key; ``hermes-gateway config`` shows no secret.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import yaml

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from hermes_mattermost.emulator import ALICE_ID, BOT_TOKEN

DM = "dmrun000000000000000000000"
GRACE = 2
SECRET = "actionssecret-0123456789abcdef"


def config(mm, token="${MATTERMOST_TOKEN}"):
    return {
        "conversation": {"shutdown_grace": GRACE},
        "model": {"demo": {"tokens_per_second": 200}},
        "streaming": {"mattermost": True},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
        "platforms": {"mattermost": {"enabled": True, "url": mm.base_url, "token": token, "reconnect_delay": 0.1,
                                     "actions_secret": "${MATTERMOST_ACTIONS_SECRET}"}},
    }


ENV = {"MATTERMOST_TOKEN": BOT_TOKEN, "MATTERMOST_ACTIONS_SECRET": SECRET, "HERMES_LOAD_PLUGINS": "mattermost"}


def leaked(text: str) -> bool:
    return BOT_TOKEN in text or SECRET in text


async def test_run_answers_a_dm_and_sigterm_mid_reply_leaves_no_cursor(mm, tmp_path):
    mm.channel(DM, "D")
    long_text = " ".join(f"w{i}" for i in range(2_500))  # ~14,000 characters, streamed at 200 tokens a second
    async with GatewayProcess(config(mm), tmp_path, env=ENV) as gateway:
        banner = await gateway.started()
        assert "mattermost" in banner
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:], timeout=30)
        await mm.post_as(ALICE_ID, DM, "echo: hello from Mattermost")
        await eventually(lambda: mm.screen(DM) == ["hello from Mattermost"], lambda: mm.screen(DM), timeout=30)
        await mm.post_as(ALICE_ID, DM, "echo: " + long_text)
        await eventually(lambda: len(mm.screen(DM)) >= 2 and len(mm.screen(DM)[1]) > 100, lambda: mm.screen(DM),
                         timeout=30)
        stopped = await gateway.stop(timeout=30)
    assert stopped.returncode == 0, stopped.err[-3000:]
    assert stopped.seconds <= GRACE + 5, f"stopping took {stopped.seconds:.1f}s"
    shown = mm.screen(DM)[1:]
    assert shown and sum(len(t) for t in shown) < len(long_text), "the reply was cut, not finished"
    assert not any("▌" in t for t in shown), shown[-1][-80:]
    assert not leaked(stopped.out + stopped.err)
    assert mm.count(429) == 0 and not mm.violations


async def test_a_refused_token_stops_start_up_in_one_line(mm, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config(mm, token="refusedtoken00000000000000")))
    env = {**os.environ, **ENV, "HERMES_HOME": str(tmp_path / "home")}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode != 0
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "platforms.mattermost.token" in lines[0], err
    assert b"refusedtoken" not in err + out


def test_config_shows_no_secret(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"platforms": {"mattermost": {
        "enabled": True, "url": "http://127.0.0.1:9", "token": "${MATTERMOST_TOKEN}",
        "actions_secret": "${MATTERMOST_ACTIONS_SECRET}"}}}))
    env = {**os.environ, **ENV, "HERMES_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "mattermost:" in done.stdout and "    token: " in done.stdout and "actions_secret" in done.stdout
    assert not leaked(done.stdout + done.stderr)
