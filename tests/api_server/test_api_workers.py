"""``hermes-gateway run --workers 2`` as real processes: one port, two workers, one store.

What a client sees: responses on fresh connections come from both workers
(``X-Hermes-Worker``), a ``previous_response_id`` chain that hops between
them keeps its whole context, a worker that is killed comes back while the
requests the kernel queued for it are still answered, SIGTERM stops every
process (exit 0), and killing the parent leaves no worker behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import aiohttp
import pytest
import yaml

from api_helpers import MODEL

pytestmark = pytest.mark.timeout(180)

GRACE = 1.0


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_"))}
    return {**env, "HERMES_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}


class Workers:
    """``run --workers N`` in a child process; the banner's address and worker pids."""

    def __init__(self, tmp_path: Path, count: int = 2, extra: dict | None = None) -> None:
        self.tmp_path = tmp_path
        self.count = count
        self.config = tmp_path / "config.yaml"
        self.config.write_text(yaml.safe_dump({
            "api_server": {"port": 0}, "store": {"path": str(tmp_path / "state.db")},
            "conversation": {"shutdown_grace": GRACE}, "model": {"demo": {"tokens_per_second": 0}}, **(extra or {})}))
        self.err_path = tmp_path / "stderr.txt"
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.pids: list[int] = []

    async def __aenter__(self) -> "Workers":
        with open(self.err_path, "wb") as err:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hermes_gateway", "run", "--config", str(self.config), "--workers",
                str(self.count), stdout=asyncio.subprocess.PIPE, stderr=err, env=environment(self.tmp_path))
        assert self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 90)).decode()
        found = re.search(r"listening on (http://\S+) .*; (\d+) workers \(pids ([\d, ]+)\)", line)
        assert found, f"{line!r}\n{self.err}"
        self.url = found.group(1)
        assert int(found.group(2)) == self.count
        self.pids = [int(pid) for pid in found.group(3).split(", ")]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        for pid in self.pids:  # never leave a worker behind, whatever the test did
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

    @property
    def err(self) -> str:
        return self.err_path.read_text(errors="replace")


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie may wait for a reaper that never comes)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True


async def respond(url: str, text: str, previous: str | None = None, *, stream: bool = False) -> tuple[str, dict]:
    """One ``POST /v1/responses`` on a connection of its own; (the worker that answered, the response).

    Streamed, the response is the one in the ``response.completed`` event, read once the stream ended.
    """
    body = {"model": MODEL, "input": text, "stream": stream,
            **({"previous_response_id": previous} if previous else {})}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
        async with session.post(f"{url}/v1/responses", json=body) as response:
            if not stream:
                data = await response.json()
                assert response.status == 200, data
                return response.headers["X-Hermes-Worker"], data
            raw = await response.text()
            assert response.status == 200, raw
            events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
            completed = [event["response"] for event in events if event.get("type") == "response.completed"]
            assert len(completed) == 1, raw[-2000:]
            return response.headers["X-Hermes-Worker"], completed[0]


async def test_a_chain_that_hops_between_workers_keeps_its_context_and_sigterm_stops_all(tmp_path):
    async with Workers(tmp_path) as workers:
        answered: list[str] = []
        tokens: list[int] = []
        previous = None
        for turn in range(40):  # fresh connections: the kernel spreads them; stop once the chain has hopped
            worker, data = await respond(workers.url, f"echo: word{turn}", previous, stream=turn % 2 == 1)
            assert data["output"][0]["content"][0]["text"] == f"word{turn}"
            answered.append(worker)
            tokens.append(data["usage"]["input_tokens"])
            previous = data["id"]
            if turn >= 3 and len(set(answered)) == 2 and any(a != b for a, b in zip(answered, answered[1:])):
                break
        assert set(answered) == {"0", "1"}, answered
        # each turn's prompt is the whole chain so far: it grows by the same step whichever worker answered
        steps = {b - a for a, b in zip(tokens, tokens[1:])}
        assert len(steps) == 1 and steps.pop() > 0, (answered, tokens)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
            for _ in range(6):  # the last response, read back from either worker
                async with session.get(f"{workers.url}/v1/responses/{previous}") as response:
                    assert response.status == 200
                    assert (await response.json())["output"][0]["content"][0]["text"] == f"word{turn}"
        assert workers.proc is not None
        started = time.monotonic()
        workers.proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(workers.proc.wait(), GRACE + 5 + 10) == 0
        assert time.monotonic() - started < GRACE + 5 + 5
        assert await gone(workers.pids, 2), workers.err
        assert workers.proc.stdout is not None
        rest = (await workers.proc.stdout.read()).decode()
        assert "hermes-gateway: stopping" in rest and "hermes-gateway: stopped" in rest


async def test_a_killed_worker_is_restarted_and_its_queued_connections_answered(tmp_path):
    async with Workers(tmp_path) as workers:
        os.kill(workers.pids[1], signal.SIGKILL)
        # while it is down, its socket stays open in the parent: requests wait for the new worker, none fail
        results = await asyncio.wait_for(asyncio.gather(*(respond(workers.url, f"echo: down{i}")
                                                          for i in range(8))), 90)
        assert [data["output"][0]["content"][0]["text"] for _, data in results] == [f"down{i}" for i in range(8)]
        deadline = time.monotonic() + 60
        while "worker 1 is back" not in workers.err:
            assert time.monotonic() < deadline, workers.err
            await asyncio.sleep(0.1)
        assert re.search(rf"worker 1 \(pid {workers.pids[1]}\) was killed by SIGKILL; restarting", workers.err)
        seen = set()
        for i in range(40):
            worker, _ = await respond(workers.url, f"echo: again{i}")
            seen.add(worker)
            if seen == {"0", "1"}:
                break
        assert seen == {"0", "1"}


async def test_no_worker_outlives_a_killed_parent(tmp_path):
    async with Workers(tmp_path) as workers:
        assert workers.proc is not None
        assert all(alive(pid) for pid in workers.pids)
        workers.proc.kill()
        await workers.proc.wait()
        assert await gone(workers.pids, GRACE + 15), workers.err
        assert "the parent process is gone; this worker stops" in workers.err


async def test_both_workers_store_responses_at_once_and_every_chain_continues_anywhere(tmp_path):
    async with Workers(tmp_path) as workers:
        firsts = await asyncio.gather(*(respond(workers.url, f"echo: first{i}") for i in range(30)))
        assert {worker for worker, _ in firsts} == {"0", "1"}  # both wrote to the one SQLite file at once
        seconds = await asyncio.gather(*(respond(workers.url, f"echo: second{i}", data["id"], stream=True)
                                         for i, (_, data) in enumerate(firsts)))
        for i, ((_, first), (_, second)) in enumerate(zip(firsts, seconds)):
            assert second["output"][0]["content"][0]["text"] == f"second{i}"
            assert second["usage"]["input_tokens"] > first["usage"]["input_tokens"]  # the first turn came along
        assert "locked" not in workers.err and "not stored" not in workers.err, workers.err


async def test_sigterm_to_the_whole_group_at_once_stops_cleanly_without_restarts(tmp_path):
    """What systemd's default KillMode does: SIGTERM to the parent and every worker together."""
    async with Workers(tmp_path) as workers:
        assert workers.proc is not None
        for pid in [workers.proc.pid, *workers.pids]:
            os.kill(pid, signal.SIGTERM)
        assert await asyncio.wait_for(workers.proc.wait(), GRACE + 5 + 10) == 0
        assert await gone(workers.pids, 2)
        assert "is back" not in workers.err, workers.err
