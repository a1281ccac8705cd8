"""``hermes-gateway demo-llm`` as a person runs it: its pace from the config, and quiet when a client hangs up."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
from pathlib import Path

import aiohttp

from cli_helpers import DEADLINE, child_env, write_config


async def start(tmp_path: Path, *args: str) -> tuple[asyncio.subprocess.Process, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0", *args, env=child_env(home), cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    banner = (await asyncio.wait_for(process.stdout.readline(), DEADLINE)).decode()
    found = re.search(r"(http://\S+/v1)", banner)
    assert found, banner
    return process, found.group(1)


async def stop(process: asyncio.subprocess.Process) -> str:
    process.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(process.communicate(), DEADLINE)
    assert process.returncode == 0, err.decode()
    return err.decode()


async def streamed_seconds(base: str, text: str) -> float:
    body = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": f"echo: {text}"}]}
    started = time.monotonic()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/chat/completions", data=json.dumps(body),
                             headers={"Content-Type": "application/json"}) as response:
            assert response.status == 200
            await response.read()
    return time.monotonic() - started


async def test_the_pace_comes_from_model_demo_tokens_per_second_in_the_config(tmp_path):
    config = write_config(tmp_path, tokens_per_second=5)
    process, base = await start(tmp_path, "--config", str(config))
    try:
        took = await streamed_seconds(base, "one two three four five six seven eight")  # 8 tokens at 5/s
    finally:
        await stop(process)
    assert took >= 1.2, f"{took:.2f}s: the config's 5 tokens/s was not used (30/s takes 0.3s)"


async def test_the_flag_beats_the_config(tmp_path):
    config = write_config(tmp_path, tokens_per_second=1)
    process, base = await start(tmp_path, "--config", str(config), "--tokens-per-second", "0")
    try:
        took = await streamed_seconds(base, "one two three four five six seven eight")
    finally:
        await stop(process)
    assert took < 4, f"{took:.2f}s: --tokens-per-second 0 should not wait a second per token"


async def test_a_client_that_drops_a_stream_costs_no_traceback(tmp_path):
    process, base = await start(tmp_path, "--tokens-per-second", "20")
    try:
        body = {"model": "demo", "stream": True,
                "messages": [{"role": "user", "content": "echo: " + " ".join(["word"] * 200)}]}
        for _ in range(3):
            async with aiohttp.ClientSession() as http:
                async with http.post(f"{base}/chat/completions", data=json.dumps(body),
                                     headers={"Content-Type": "application/json"}) as response:
                    await response.content.readline()  # the first frame, then hang up
        await asyncio.sleep(1.0)  # the server writes into the closed connection meanwhile
        assert await streamed_seconds(base, "still serving") < DEADLINE
    finally:
        err = await stop(process)
    assert "Traceback" not in err and "Error handling request" not in err, err[-2000:]
