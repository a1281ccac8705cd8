"""``hermes-gateway run``, ``config`` and ``doctor`` as a user runs them: a config file, the installed plugin, the
daemon emulator as signal-cli."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import yaml

from hermes_signal.doctor import doctor
from hermes_signal.settings import SignalSettings
from signal_test_support import ACCOUNT, ALICE, eventually

TOKEN = "pr0xy-t0ken-for-the-daemon"


def write_config(tmp_path, url, **signal_section):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"enabled": False},
        "streaming": {"signal": True},
        "platforms": {"signal": {"enabled": True, "account": ACCOUNT, "url": url, **signal_section}},
    }))
    return path


def environment(tmp_path):
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home"), "SIGNAL_PROXY_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    return env


async def test_run_answers_a_signal_message_until_sigterm(daemon, tmp_path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(write_config(tmp_path, daemon.base_url)),
        env=environment(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"signal" in banner, banner
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls, timeout=60)
        daemon.push_message(ALICE, "echo: hello from Signal")
        await eventually(lambda: daemon.screen(ALICE) == ["hello from Signal"], lambda: daemon.screen(ALICE), 60)
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    assert daemon.violations == []


def test_config_masks_the_proxy_token_and_a_bad_number_is_one_line(tmp_path):
    path = write_config(tmp_path, "http://127.0.0.1:9", token="${SIGNAL_PROXY_TOKEN}")
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                          env=environment(tmp_path), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode()
    assert "signal:" in shown and "    token: " in shown and TOKEN not in shown + done.stderr.decode()
    bad = write_config(tmp_path, "http://127.0.0.1:9", account="015112345678")
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(bad)],
                          env=environment(tmp_path), capture_output=True, timeout=60)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and "platforms.signal.account" in lines[0], lines


async def test_doctor_says_the_daemon_answers_or_how_to_start_it(daemon):
    assert await doctor(SignalSettings(account=ACCOUNT, url=daemon.base_url)) == [
        (True, f"signal-cli daemon 0.14.6 answers at {daemon.base_url}"),
        (True, f"account {ACCOUNT} is known to the daemon")]
    await daemon.take_down()
    ((ok, line),) = await doctor(SignalSettings(account=ACCOUNT, url=daemon.base_url))
    assert not ok and "not reachable" in line and f"signal-cli -a {ACCOUNT} daemon --http" in line
