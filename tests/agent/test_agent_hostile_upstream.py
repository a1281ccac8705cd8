"""The hostile-upstream matrix (issue 33): a real ``hermes-gateway run`` against an upstream that misbehaves.

For each transport, one gateway process serves the API with its model on
:mod:`raw_upstream`; each case sets how the upstream answers and asks the
gateway for a reply while polling ``/health`` every 50 ms. Measured in the
gateway's process, throughout every case:

- resident memory (``VmRSS``) grows by less than 100 MB over what it was
  after a first normal turn;
- the event loop is never blocked for 250 ms or more: for each ``/health``
  request, the time it took, counted only as far as the gateway's main
  thread was on a CPU meanwhile (``/proc/PID/task/PID/schedstat``) — a
  blocked loop burns its thread's CPU the whole time, while a loop that
  merely waits its turn on a shared machine does not;
- ``/health`` answers every time;
- the turn ends with the reply or a short, one-line error message.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from raw_upstream import Exchange, RawUpstream, answer_with, bomb, chunk, chunked, head, sse

HELLO = sse("Hel", "lo ", "there")
MAX_REPLY = 20_000
MB = 1 << 20


def endless(start: bytes, piece: bytes, pause: float = 0.0):
    async def answer(ex: Exchange) -> None:
        await ex.endless(start, piece, pause)
    return answer


def redirect(status: int):
    async def answer(ex: Exchange) -> None:
        if ex.head.startswith(b"POST /v2/"):
            await ex.send(head("200 OK", length=len(HELLO)) + HELLO)
        else:
            await ex.send(head(f"{status} Moved", "Location: /v2/chat/completions", length=0, content_type=None))
    return answer


def reset_mid_stream():
    async def answer(ex: Exchange) -> None:
        ex.keep = False
        await ex.send(head("200 OK", "Transfer-Encoding: chunked") + chunked(HELLO[:120])[:-5])
        await asyncio.sleep(0.05)
        ex.writer.transport.abort()  # type: ignore[attr-defined]
    return answer


_bombs: dict[int, bytes] = {}


def bombed(coding: str, wbits: int):
    async def answer(ex: Exchange) -> None:
        if wbits not in _bombs:
            _bombs[wbits] = await asyncio.to_thread(bomb, wbits, 256 * MB)
        body = _bombs[wbits]
        await ex.send(head("200 OK", f"Content-Encoding: {coding}", length=len(body)) + body)
    return answer


TOKEN = chunked(f"data: {json.dumps(chunk('word '))}\n\n".encode())[:-5]

#: case: (the answer, the reply expected, or None: a short error)
MATRIX: dict[str, tuple[Any, str | None]] = {
    "endless headers": (endless(b"HTTP/1.1 200 OK\r\n", b"X-More: yes\r\n" * 64), None),
    "one endless header value": (endless(b"HTTP/1.1 200 OK\r\nX-Long: ", b"a" * 65536), None),
    "endless sse line": (endless(head("200 OK", "Connection: close"), b"data: " + b"x" * 65536), None),
    "endless sse event": (endless(head("200 OK", "Connection: close"), b"data: x\n" * 8192), None),
    "gzip bomb": (bombed("gzip", 31), None),
    "deflate bomb": (bombed("deflate", 15), None),
    "endless tokens": (endless(head("200 OK", "Transfer-Encoding: chunked"), TOKEN * 64),
                       ("word " * MAX_REPLY)[:MAX_REPLY].strip()),
    "307 redirect": (redirect(307), "Hello there"),
    "308 redirect": (redirect(308), "Hello there"),
    "103 early hints": (answer_with(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n",
                                    head("200 OK", length=len(HELLO)) + HELLO, pause=0.05), "Hello there"),
    "reset mid-stream": (reset_mid_stream(), None),
    "one byte every 5 s": (endless(b"", b"H", pause=5.0), None),
}


@dataclass
class Gauge:
    """What was measured in the gateway's process during one case."""

    rss: list[int] = field(default_factory=list)         # VmRSS samples, bytes
    blocked: list[float] = field(default_factory=list)   # per /health request: seconds, as far as the loop ran
    health_failures: list[str] = field(default_factory=list)


def rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def main_thread_cpu(pid: int) -> float:
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9


async def watch(session: aiohttp.ClientSession, url: str, pid: int, gauge: Gauge, stop: asyncio.Event) -> None:
    while not stop.is_set():
        gauge.rss.append(rss(pid))
        cpu, started = main_thread_cpu(pid), time.monotonic()
        try:
            async with session.get(f"{url}/health", timeout=aiohttp.ClientTimeout(total=10)) as r:
                await r.read()
                if r.status != 200:
                    gauge.health_failures.append(f"status {r.status}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            gauge.health_failures.append(repr(exc))
        took = time.monotonic() - started
        gauge.blocked.append(min(took, main_thread_cpu(pid) - cpu))
        try:
            await asyncio.wait_for(stop.wait(), 0.05)
        except TimeoutError:
            pass


@dataclass
class Gateway:
    proc: asyncio.subprocess.Process
    url: str


async def start_gateway(tmp_path: Path, upstream: RawUpstream, transport: str) -> Gateway:
    config = {
        "api_server": {"port": 0},
        "model": {"base_url": upstream.url, "name": "hostile", "api_key": "sk-hostile", "transport": transport,
                  "max_reply_chars": MAX_REPLY, "timeouts": {"first_token": 2, "stall": 1, "connect": 2}},
    }
    path = tmp_path / f"config-{transport}.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=tmp_path)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    found = re.search(r"listening on (http://\S+)", line)
    assert found, line
    return Gateway(proc, found.group(1))


async def ask(session: aiohttp.ClientSession, url: str) -> tuple[int, dict]:
    body = {"model": "hermes-gateway", "messages": [{"role": "user", "content": "hello"}]}
    async with session.post(f"{url}/v1/chat/completions", json=body,
                            timeout=aiohttp.ClientTimeout(total=120)) as r:
        return r.status, await r.json(content_type=None)


async def run_case(session: aiohttp.ClientSession, gateway: Gateway) -> tuple[int, dict, Gauge]:
    gauge = Gauge()
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(watch(session, gateway.url, gateway.proc.pid, gauge, stop))
    try:
        status, answer = await ask(session, gateway.url)
    finally:
        stop.set()
        await watcher
    gauge.rss.append(rss(gateway.proc.pid))
    return status, answer, gauge


@pytest.mark.parametrize("transport", ["fast", "sdk"])
async def test_a_hostile_upstream_costs_bounded_memory_and_never_blocks_the_gateway(
        tmp_path: Path, transport: str) -> None:
    async with RawUpstream(answer_with(head("200 OK", length=len(HELLO)) + HELLO)) as upstream:
        gateway = await start_gateway(tmp_path, upstream, transport)
        try:
            async with aiohttp.ClientSession() as session:
                status, answer = await ask(session, gateway.url)  # a first normal turn: everything imported
                assert (status, answer["choices"][0]["message"]["content"]) == (200, "Hello there")
                baseline = rss(gateway.proc.pid)
                problems = []
                for name, (answer_of, expected) in MATRIX.items():
                    upstream.answer = answer_of
                    status, answer, gauge = await run_case(session, gateway)
                    grew = (max(gauge.rss) - baseline) / MB
                    worst = max(gauge.blocked, default=0.0)
                    if expected is not None:
                        ended = status == 200 and answer["choices"][0]["message"]["content"] == expected
                    else:
                        message = answer.get("error", {}).get("message", "") if isinstance(answer, dict) else ""
                        ended = status >= 400 and 0 < len(message) < 300 and "\n" not in message
                    if grew >= 100 or worst >= 0.25 or gauge.health_failures or not ended or not gauge.blocked:
                        problems.append(f"{name}: +{grew:.0f} MB, loop blocked {worst * 1000:.0f} ms, "
                                        f"/health failures {gauge.health_failures[:2]}, answer {status} "
                                        f"{json.dumps(answer)[:200]}")
                assert not problems, "\n".join(problems)
        finally:
            gateway.proc.terminate()
            await asyncio.wait_for(gateway.proc.wait(), 30)
