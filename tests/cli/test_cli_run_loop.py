"""``hermes-gateway run --loop``: which event loop serves, and a whole streamed reply on each one.

Why uvloop by default is in ``hermes_gateway/_core/cli/event_loop.py``. Each case
runs in a child process, as a person would start the gateway.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import openai
import pytest
import yaml

from cli_helpers import DEADLINE, child_env

# run() as the command line calls it, with serve() replaced by a probe of the loop it runs on.
PROBE = textwrap.dedent("""
    import argparse, asyncio, sys
    from hermes_gateway._core.cli import run as run_command

    async def serve(config, plugins=None):
        loop = asyncio.get_running_loop()
        print("running on", type(loop).__module__ + "." + type(loop).__name__, flush=True)
        return 0

    run_command.serve = serve
    sys.exit(run_command.run(argparse.Namespace(config=sys.argv[1], loop=sys.argv[2])))
""")

NO_UVLOOP = "raise ImportError('uvloop is not installed (simulated by the test)')\n"


def probe(tmp_path: Path, loop: str, *, without_uvloop: bool = False) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"api_server": {"port": 0}, "store": {"path": str(tmp_path / "s.db")}}))
    env = child_env(tmp_path / "home")
    if without_uvloop:
        hidden = tmp_path / "hide"
        (hidden / "uvloop").mkdir(parents=True, exist_ok=True)
        (hidden / "uvloop" / "__init__.py").write_text(NO_UVLOOP)
        env["PYTHONPATH"] = str(hidden)
    return subprocess.run([sys.executable, "-c", PROBE, str(config), loop], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=DEADLINE)


@pytest.mark.parametrize("choice, loop", [("auto", "uvloop.Loop"), ("uvloop", "uvloop.Loop"),
                                          ("asyncio", "asyncio.unix_events._UnixSelectorEventLoop")])
def test_run_serves_on_the_loop_asked_for(tmp_path, choice, loop):
    done = probe(tmp_path, choice)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"running on {loop}"


def test_without_uvloop_auto_falls_back_to_asyncio_and_uvloop_refuses_in_one_line(tmp_path):
    auto = probe(tmp_path, "auto", without_uvloop=True)
    assert auto.returncode == 0, auto.stderr
    assert auto.stdout.strip() == "running on asyncio.unix_events._UnixSelectorEventLoop"
    insist = probe(tmp_path, "uvloop", without_uvloop=True)
    assert insist.returncode == 2
    assert insist.stdout == ""
    assert insist.stderr.strip().splitlines() == [
        "hermes-gateway: cannot start: --loop uvloop: uvloop is not installed here (pip install uvloop), "
        "or use --loop asyncio"]


@pytest.mark.parametrize("choice", ["uvloop", "asyncio"])
async def test_a_streamed_reply_reaches_the_sdk_whole_on_either_loop(tmp_path, choice):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"api_server": {"port": 0}, "store": {"path": str(tmp_path / "s.db")},
                                      "model": {"demo": {"tokens_per_second": 200}}}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "-v", "run", "--loop", choice, "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=child_env(tmp_path / "home"),
        cwd=tmp_path)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), DEADLINE)).decode()
        url = re.search(r"listening on (http://\S+)", line)
        assert url, line
        client = openai.AsyncOpenAI(base_url=f"{url.group(1)}/v1", api_key="unused")
        stream = await client.chat.completions.create(
            model="hermes-gateway", stream=True, messages=[{"role": "user", "content": "echo: one two three"}])
        text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        assert text == "one two three"
        await client.close()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), DEADLINE) == 0
        log = (await proc.stderr.read()).decode()
        assert f"event loop: {choice}" in log
        assert "Traceback" not in log
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
