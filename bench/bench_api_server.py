"""Load benchmark of the OpenAI-compatible API server (run by hand, not in CI).

Three processes on loopback: the ``demo-llm`` upstream, ``hermes-gateway run``
pointed at it, and this load generator (plain aiohttp, not the SDK, so the
client costs little). For each concurrency level it streams the same
Chat Completions request first straight to the upstream, then through the
gateway, and reports:

* TTFT (request sent -> first content delta received), p50/p99, direct and
  through the gateway, and the difference ("added");
* aggregate content deltas per second through the gateway;
* gateway CPU (user+system, from /proc) per delta delivered, split into the
  agent's share (the bare ``AIAgent`` streaming the same replies in a child
  process, events dropped) and the rest: the API server's own share
  (HTTP in, validation, framing, one socket write per delta);
* errors (non-200, missing [DONE], wrong text).

Every level is repeated ``--repeats`` times and the median of each figure is
printed, because the machine is shared and noisy.

    .venv/bin/python bench/bench_api_server.py                 # 1, 50, 500 streams
    .venv/bin/python bench/bench_api_server.py --levels 1 50 --words 100 --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

CONTENT = re.compile(rb'"content":\s*"[^"]')
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    ttft: list[float] = field(default_factory=list)
    deltas: int = 0
    errors: int = 0
    wall: float = 0.0
    cpu: float = 0.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


async def start_process(*args: str, pattern: str) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hermes_gateway", *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    match = re.search(pattern, line)
    if not match:
        proc.kill()
        raise SystemExit(f"could not start {args[0]}: {line!r}")
    return proc, match.group(1)


async def one_stream(session: aiohttp.ClientSession, url: str, body: dict, expected_deltas: int, run: Run) -> None:
    start = time.perf_counter()
    first = None
    deltas = 0
    done = False
    try:
        async with session.post(url, json=body) as r:
            if r.status != 200:
                run.errors += 1
                await r.read()
                return
            async for line in r.content:
                if CONTENT.search(line):
                    deltas += 1
                    if first is None:
                        first = time.perf_counter() - start
                elif line.startswith(b"data: [DONE]"):
                    done = True
    except (aiohttp.ClientError, asyncio.TimeoutError):
        run.errors += 1
        return
    if not done or deltas != expected_deltas or first is None:
        run.errors += 1
    else:
        run.ttft.append(first)
    run.deltas += deltas


async def load(url: str, body: dict, expected: int, concurrency: int, total: int, cpu_pid: int | None) -> Run:
    run = Run()
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        sem = asyncio.Semaphore(concurrency)

        async def limited() -> None:
            async with sem:
                await one_stream(session, url, body, expected, run)
        await one_stream(session, url, body, expected, Run())  # warm the connection pools
        cpu0 = cpu_seconds(cpu_pid) if cpu_pid else 0.0
        t0 = time.perf_counter()
        await asyncio.gather(*(limited() for _ in range(total)))
        run.wall = time.perf_counter() - t0
        run.cpu = (cpu_seconds(cpu_pid) - cpu0) if cpu_pid else 0.0
    return run


async def agent_only(upstream_url: str, words: str, concurrency: int, total: int) -> None:
    """Child process: the bare AIAgent streaming from the upstream, events consumed and dropped.

    Its CPU per delta is the agent's share of the gateway's cost (the openai
    SDK parsing the upstream stream); the rest is the API server's.
    """
    from hermes_gateway.agent import AIAgent
    from hermes_gateway.config import parse_config
    from hermes_gateway.events import TextDelta

    config = parse_config({"model": {"base_url": upstream_url, "name": "demo"}}, env={})
    agent = AIAgent.from_config(config, tools=[])
    deltas = 0

    async def one() -> None:
        nonlocal deltas
        async for event in agent.astream(f"echo: {words}"):
            if type(event) is TextDelta:
                deltas += 1
    await one()  # warm up
    deltas = 0
    sem = asyncio.Semaphore(concurrency)

    async def limited() -> None:
        async with sem:
            await one()
    cpu0 = time.process_time()
    await asyncio.gather(*(limited() for _ in range(total)))
    print(f"{(time.process_time() - cpu0) / deltas * 1e6:.3f}")
    await agent.aclose()


class InstantAgent:
    """A stand-in event source for the "API server alone" table: yields the echoed words at once.

    Used only to isolate the API server's own cost from the agent's; the
    main table always runs the real AIAgent against demo-llm.
    """

    async def astream(self, message: str, history: object = None):
        from hermes_gateway.events import TextDelta, TurnEnd, UsageReport

        words = message.split(" ")[1:]
        for i, word in enumerate(words):
            yield TextDelta(word if i == 0 else " " + word)
            await asyncio.sleep(0)  # one event-loop turn per delta, like a real upstream read
        yield UsageReport(1, len(words), len(words) + 1)
        yield TurnEnd(reply=" ".join(words), raw=" ".join(words))

    def interrupt(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def serve_instant() -> None:
    """Child process: the gateway with :class:`InstantAgent` in place of the real agent."""
    from hermes_gateway.config import parse_config
    from hermes_gateway.gateway import Gateway
    from hermes_gateway.plugins import make_plugins

    gateway = Gateway(parse_config({"api_server": {"port": 0}}, env={}), make_plugins(load_entry_points=False))
    gateway._agent = InstantAgent()
    async with gateway:
        print(f"listening on {gateway.url}", flush=True)
        await asyncio.Event().wait()


async def agent_cpu_per_delta(upstream_url: str, words: str, concurrency: int, total: int) -> float:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--agent-only", upstream_url, words, str(concurrency), str(total),
        stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return float(out.decode().strip().splitlines()[-1])


async def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-instant":
        await serve_instant()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--agent-only":
        url, words, concurrency, total = sys.argv[2:6]
        await agent_only(url, words, int(concurrency), int(total))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 50, 500])
    parser.add_argument("--words", type=int, default=100, help="words per reply (one delta each)")
    parser.add_argument("--requests", type=int, default=0, help="streams per level (default: max(100, 2*level))")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens-per-second", type=float, default=0.0, help="upstream pace (0 = as fast as possible)")
    args = parser.parse_args()

    words = " ".join(f"w{i}" for i in range(args.words))
    upstream, upstream_url = await start_process("demo-llm", "--port", "0", "--tokens-per-second",
                                                 str(args.tokens_per_second), pattern=r"(http://\S+/v1)")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(f"api_server: {{port: 0}}\nmodel: {{base_url: '{upstream_url}', name: demo}}\n")
        gateway, gateway_url = await start_process("run", "--config", str(config), pattern=r"listening on (http://\S+)")
    try:
        direct_body = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": f"echo: {words}"}]}
        via_body = {**direct_body, "model": "hermes-gateway"}
        print(f"{args.words} words per reply, upstream pace {args.tokens_per_second or 'unlimited'} tokens/s, "
              f"median of {args.repeats} runs; {os.cpu_count()} CPUs\n")
        print("| streams | TTFT p50 direct | TTFT p50 via gateway | added p50 | added p99 | deltas/s | "
              "gateway CPU µs/delta | of which agent | of which API server | errors |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for level in args.levels:
            total = args.requests or max(100, 2 * level)
            rows = []
            for _ in range(args.repeats):
                direct = await load(f"{upstream_url}/chat/completions", direct_body, args.words, level, total, None)
                via = await load(f"{gateway_url}/v1/chat/completions", via_body, args.words, level, total,
                                 gateway.pid)
                agent_cpu = await agent_cpu_per_delta(upstream_url, words, level, total)
                rows.append({
                    "direct50": percentile(direct.ttft, 0.5), "via50": percentile(via.ttft, 0.5),
                    "add50": percentile(via.ttft, 0.5) - percentile(direct.ttft, 0.5),
                    "add99": percentile(via.ttft, 0.99) - percentile(direct.ttft, 0.99),
                    "rate": via.deltas / via.wall if via.wall else 0.0,
                    "cpu": via.cpu / via.deltas * 1e6 if via.deltas else float("nan"),
                    "agent": agent_cpu,
                    "errors": via.errors + direct.errors,
                })
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            errors = sum(r["errors"] for r in rows)
            print(f"| {level} | {med['direct50'] * 1e3:.2f} ms | {med['via50'] * 1e3:.2f} ms | "
                  f"{med['add50'] * 1e3:.2f} ms | {med['add99'] * 1e3:.2f} ms | {med['rate']:,.0f} | "
                  f"{med['cpu']:.1f} | {med['agent']:.1f} | {med['cpu'] - med['agent']:.1f} | {errors} |", flush=True)
    finally:
        for proc in (gateway, upstream):
            proc.terminate()
            await proc.wait()
    await api_server_alone(args, via_body)


async def api_server_alone(args: argparse.Namespace, body: dict) -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve-instant",
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    url = re.search(r"listening on (http://\S+)", line).group(1)
    try:
        print("\nAPI server alone (the agent replaced by an instant event source, to isolate the server's cost):\n")
        print("| streams | TTFT p50 | TTFT p99 | deltas/s | API server CPU µs/delta | errors |")
        print("|---:|---:|---:|---:|---:|---:|")
        for level in args.levels:
            total = args.requests or max(100, 2 * level)
            runs = [await load(f"{url}/v1/chat/completions", body, args.words, level, total, proc.pid)
                    for _ in range(args.repeats)]
            med = lambda f: statistics.median(f(r) for r in runs)  # noqa: E731
            print(f"| {level} | {med(lambda r: percentile(r.ttft, 0.5)) * 1e3:.2f} ms | "
                  f"{med(lambda r: percentile(r.ttft, 0.99)) * 1e3:.2f} ms | {med(lambda r: r.deltas / r.wall):,.0f} | "
                  f"{med(lambda r: r.cpu / r.deltas * 1e6):.1f} | {sum(r.errors for r in runs)} |", flush=True)
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    asyncio.run(main())
