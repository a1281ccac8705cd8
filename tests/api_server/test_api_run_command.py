"""``hermes-gateway run`` as a real process: serve, then stop on SIGTERM/Ctrl-C with streams ended properly."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import pytest
import yaml

from api_helpers import MODEL, parse_sse


async def start(tmp_path: Path, config: dict) -> tuple[asyncio.subprocess.Process, str]:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    match = re.search(r"listening on (http://\S+)", line)
    assert match, line + (await proc.stderr.read()).decode()
    return proc, match.group(1)


def slow_demo(port: int = 0) -> dict:
    # the demo model's default answer is ~150 words; at 40 words/s it is still streaming when the signal lands
    return {"api_server": {"port": port}, "model": {"demo": {"tokens_per_second": 40}}}


@pytest.mark.parametrize("sig, path", [(signal.SIGTERM, "/v1/chat/completions"), (signal.SIGINT, "/v1/responses")])
async def test_signal_mid_stream_ends_the_stream_properly_and_exits_0(tmp_path, sig, path):
    proc, url = await start(tmp_path, slow_demo())
    try:
        body = ({"model": MODEL, "input": "hello", "stream": True} if path == "/v1/responses" else
                {"model": MODEL, "messages": [{"role": "user", "content": "hello"}], "stream": True})
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/health") as r:
                assert r.status == 200
            async with session.post(f"{url}{path}", json=body) as r:
                seen = b""
                while b"demo" not in seen:
                    seen += await asyncio.wait_for(r.content.readany(), 10)
                proc.send_signal(sig)
                seen += await asyncio.wait_for(r.read(), 10)
        events = parse_sse(seen)  # asserts the body ends at a frame boundary
        if path == "/v1/responses":
            last = events[-1].json()
            assert last["type"] == "response.failed"
            assert "shutting down" in last["response"]["error"]["message"]
        else:
            assert events[-1].data == "[DONE]"
            assert events[-2].json()["error"]["code"] == "server_shutdown"
        assert await asyncio.wait_for(proc.wait(), 15) == 0
        out = (await proc.stdout.read()).decode()
        assert "stopped" in out
        assert "Traceback" not in (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_idle_gateway_stops_on_sigterm_with_exit_0(tmp_path):
    proc, url = await start(tmp_path, slow_demo())
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 15) == 0


async def test_public_host_without_keys_refuses_to_start_with_one_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"api_server": {"host": "0.0.0.0", "port": 0}}))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "api_server.api_keys" in lines[0] and "allow_unauthenticated" in lines[0]


async def test_port_in_use_is_one_clear_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({"api_server": {"port": port}}))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hermes_gateway", "run", "--config", str(path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert err.decode().startswith("hermes-gateway: cannot start:") and "Traceback" not in err.decode()
