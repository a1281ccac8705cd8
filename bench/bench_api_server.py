"""Load benchmark of the OpenAI-compatible API server (run by hand, not in CI): issue 13's harness.

For each workload (reply length, upstream pace, concurrency) it starts the
``demo-llm`` upstream, ``hermes-gateway run`` pointed at it, and a raw
aiohttp byte relay (``--serve-relay``: forwards the body, relays the SSE
bytes unchanged, one write per read: the least a Python proxy can spend),
then streams the same Chat Completions request straight to the upstream
("direct"), through the relay and through the gateway, in turn within each
run, and prints per target: TTFT p50 and its difference from direct,
throughput as a ratio of direct, CPU (user+system of the process, in ns from
/proc/PID/task/*/schedstat) per chunk and per request, errors; and the gateway's CPU as a ratio
of the relay's, with the spread of the per-run ratios (the machine's noise).
The gateway and the relay are pinned to one core, the upstream and this load
generator (plain aiohttp, not the SDK) to the other.

    .venv/bin/python bench/bench_api_server.py                       # the four workloads, 3 runs
    .venv/bin/python bench/bench_api_server.py --workloads 1 2 --scale 0.3
    .venv/bin/python bench/bench_api_server.py --baseline-src /tmp/main_checkout   # + "before"
    .venv/bin/python bench/bench_api_server.py --extra relay-uvloop ours-asyncio   # + both loops of each

The gateway serves on uvloop (``hermes-gateway run``'s default when it is
installed); the relay, as the issue defines it, on asyncio's loop, and with
``--extra relay-uvloop`` on uvloop too, for the comparison on equal loops.
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
    """The process's time on a CPU so far, user and system, to the nanosecond where the kernel tells it.

    ``/proc/PID/task/*/schedstat`` counts each thread's run time in ns; ``/proc/PID/stat``'s utime + stime
    are 10 ms ticks (±0.05 ms per request over 200 requests, a third of the gap this benchmark measures).
    Threads that ended are missing from the sum, so the ticks are the fallback only (no schedstats).
    """
    try:
        return sum(int((task / "schedstat").read_text().split()[0])
                   for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


async def start_process(*args: str, pattern: str, src: str | None = None) -> tuple[asyncio.subprocess.Process, str]:
    """``python -m hermes_gateway ARGS``; ``src``: another checkout's source tree to run instead of this one."""
    env = {**os.environ, "PYTHONPATH": src} if src else None
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hermes_gateway", *args, env=env, cwd=src,
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
    from hermes_gateway._core.agent import AIAgent
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.events import TextDelta

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

    async def astream(self, message: str, history: object = None, options: object = None):
        from hermes_gateway._core.events import TextDelta, TurnEnd, UsageReport

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
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.plugins import make_plugins

    gateway = Gateway(parse_config({"api_server": {"port": 0}}, env={}), make_plugins(load_entry_points=False))
    gateway._agent = InstantAgent()
    async with gateway:
        print(f"listening on {gateway.url}", flush=True)
        await asyncio.Event().wait()


WORKLOADS = {
    # name: (words per reply, upstream tokens/s (0 = back to back), concurrent streams, streams per run)
    "1 chunk, 1 at a time": (1, 0.0, 1, 200),
    "200 chunks back to back, 1 at a time": (200, 0.0, 1, 60),
    "200 chunks @ 20 ms, 50 at a time": (200, 50.0, 50, 100),
    "100 chunks @ 50 ms, 200 at a time": (100, 20.0, 200, 400),
}


async def serve_relay(upstream_url: str) -> None:
    """Child process: the least any Python proxy can spend. An aiohttp server that forwards the request
    body to the upstream and the upstream's SSE bytes back unchanged, one write per read."""
    from aiohttp import web

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def relay(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        async with session.post(f"{upstream_url}/chat/completions", data=body,
                                headers={"Content-Type": "application/json"}) as upstream:
            response = web.StreamResponse(status=upstream.status,
                                          headers={"Content-Type": upstream.headers.get("Content-Type", "")})
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", relay)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    print(f"listening on http://{host}:{port}", flush=True)
    await asyncio.Event().wait()


def pin(pid: int, cpus: set[int]) -> None:
    try:
        os.sched_setaffinity(pid, cpus)
    except (AttributeError, OSError):
        pass


def gateway_config(directory: Path, upstream_url: str) -> Path:
    """A config.yaml in ``directory`` for the gateway under test: any free port, ``upstream_url`` as its model."""
    config = directory / "config.yaml"
    config.write_text(f"api_server: {{port: 0}}\nmodel: {{base_url: '{upstream_url}', name: demo}}\n"
                      f"store: {{path: '{directory}/state.db'}}\n")
    return config


async def start_relay(upstream_url: str, loop: str = "asyncio") -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "--serve-relay", upstream_url, loop,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    return proc, re.search(r"listening on (http://\S+)", line).group(1)


async def start_targets(pace: float, gateway_cpus: set[int], other_cpus: set[int],
                        baseline_src: str | None = None, extras: tuple[str, ...] = ()) -> dict:
    """An upstream at ``pace``, the relay and the gateway in front of it; pinned as the issue's harness.

    ``extras``: "relay-uvloop" (the relay on uvloop) and "ours-asyncio" (the gateway with ``--loop asyncio``),
    measured as further targets in the same runs.
    """
    upstream, upstream_url = await start_process("demo-llm", "--port", "0", "--tokens-per-second", str(pace),
                                                 pattern=r"(http://\S+/v1)")
    relay_proc, relay_url = await start_relay(upstream_url)
    with tempfile.TemporaryDirectory() as tmp:
        config = gateway_config(Path(tmp), upstream_url)
        gateway, gateway_url = await start_process("run", "--config", str(config),
                                                   pattern=r"listening on (http://\S+)")
        baseline = None
        if baseline_src:
            baseline, baseline_url = await start_process("run", "--config", str(config), src=baseline_src,
                                                         pattern=r"listening on (http://\S+)")
            pin(baseline.pid, gateway_cpus)
        extra: dict[str, tuple[asyncio.subprocess.Process, str]] = {}
        if "ours-asyncio" in extras:
            extra["ours-asyncio"] = await start_process("run", "--loop", "asyncio", "--config", str(config),
                                                        pattern=r"listening on (http://\S+)")
    if "relay-uvloop" in extras:
        extra["relay-uvloop"] = await start_relay(upstream_url, "uvloop")
    pin(os.getpid(), other_cpus)
    pin(upstream.pid, other_cpus)
    pin(relay_proc.pid, gateway_cpus)
    pin(gateway.pid, gateway_cpus)
    targets = {"procs": [gateway, relay_proc, upstream], "upstream": upstream_url, "relay": relay_url,
               "gateway": gateway_url, "gateway_pid": gateway.pid, "relay_pid": relay_proc.pid, "extra": {}}
    if baseline is not None:
        targets["procs"].insert(0, baseline)
        targets.update(baseline=baseline_url, baseline_pid=baseline.pid)
    for name, (proc, url) in extra.items():
        pin(proc.pid, gateway_cpus)
        targets["procs"].insert(0, proc)
        targets["extra"][name] = (url, proc.pid)
    return targets


async def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-instant":
        await serve_instant()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-relay":
        await serve_relay(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--agent-only":
        url, words, concurrency, total = sys.argv[2:6]
        await agent_only(url, words, int(concurrency), int(total))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", nargs="+", type=int, default=list(range(1, len(WORKLOADS) + 1)),
                        help="which workloads (1-based) to run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the streams per run (quick runs: 0.3)")
    parser.add_argument("--instant", action="store_true", help="also the API server alone (instant agent)")
    parser.add_argument("--baseline-src", help="another checkout (e.g. `git archive main`) measured as 'before'")
    parser.add_argument("--extra", nargs="+", default=[], choices=["relay-uvloop", "ours-asyncio"],
                        help="further targets: the relay on uvloop, the gateway on asyncio's loop")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    gateway_cpus = {cpus[0]}
    other_cpus = set(cpus[1:]) or gateway_cpus
    print(f"median of {args.repeats} runs, targets measured in turn within each run; gateway and relay pinned "
          f"to CPU {sorted(gateway_cpus)}, upstream and load generator to {sorted(other_cpus)}; "
          f"{os.cpu_count()} CPUs\n")
    print("| workload | target | TTFT p50 | TTFT p50 − direct | TTFT p99 | throughput × direct | CPU µs per chunk | "
          "CPU ms per request | errors |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    names = list(WORKLOADS)
    for number in args.workloads:
        name = names[number - 1]
        words_n, pace, level, total = WORKLOADS[name]
        total = max(level, int(total * args.scale))
        words = " ".join(f"w{i}" for i in range(words_n))
        targets = await start_targets(pace, gateway_cpus, other_cpus, args.baseline_src, tuple(args.extra))
        try:
            body = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": f"echo: {words}"}]}
            ours_body = {**body, "model": "hermes-gateway"}
            runs: dict[str, list[Run]] = {"direct": [], "relay": [], "ours": []}
            if "baseline" in targets:
                runs["before"] = []
            for extra in targets["extra"]:
                runs[extra] = []
            for _ in range(args.repeats):
                runs["direct"].append(await load(f"{targets['upstream']}/chat/completions", body, words_n, level,
                                                 total, None))
                runs["relay"].append(await load(f"{targets['relay']}/v1/chat/completions", body, words_n, level,
                                                total, targets["relay_pid"]))
                runs["ours"].append(await load(f"{targets['gateway']}/v1/chat/completions", ours_body, words_n,
                                               level, total, targets["gateway_pid"]))
                if "baseline" in targets:
                    runs["before"].append(await load(f"{targets['baseline']}/v1/chat/completions", ours_body,
                                                     words_n, level, total, targets["baseline_pid"]))
                for extra, (url, pid) in targets["extra"].items():
                    runs[extra].append(await load(f"{url}/v1/chat/completions",
                                                  body if extra.startswith("relay") else ours_body,
                                                  words_n, level, total, pid))
            report(name, runs, total)
        finally:
            for proc in targets["procs"]:
                proc.terminate()
                await proc.wait()
    if args.instant:
        await api_server_alone(args, {"model": "hermes-gateway", "stream": True, "messages": [
            {"role": "user", "content": "echo: " + " ".join(f"w{i}" for i in range(100))}]})


def report(name: str, runs: dict[str, list[Run]], total: int) -> None:
    """One row per target: medians, and ratios against direct (throughput) and the relay (CPU)."""
    def med(target: str, f) -> float:
        return statistics.median(f(r) for r in runs[target])

    rate = {t: med(t, lambda r: r.deltas / r.wall if r.wall else 0.0) for t in runs}
    ttft = {t: med(t, lambda r: percentile(r.ttft, 0.5)) for t in runs}
    ttft99 = {t: med(t, lambda r: percentile(r.ttft, 0.99)) for t in runs}
    chunk = {t: med(t, lambda r: r.cpu / r.deltas * 1e6 if r.deltas else float("nan")) for t in runs}
    request = {t: med(t, lambda r: r.cpu / total * 1e3) for t in runs}
    for target in runs:
        errors = sum(r.errors for r in runs[target])
        cpu = "" if target == "direct" else f"{chunk[target]:.1f}"
        per_request = "" if target == "direct" else f"{request[target]:.2f}"
        print(f"| {name} | {target} | {ttft[target] * 1e3:.2f} ms | {(ttft[target] - ttft['direct']) * 1e3:+.2f} ms | "
              f"{ttft99[target] * 1e3:.2f} ms | {rate[target] / rate['direct']:.2f} | {cpu} | {per_request} | "
              f"{errors} |", flush=True)
    for target in [t for t in ("ours", "before", "ours-asyncio") if t in runs]:
        ratios = [o.cpu / max(r.cpu, 1e-9) for o, r in zip(runs[target], runs["relay"])]
        print(f"| {name} | {target} ÷ relay | | {(ttft[target] - ttft['relay']) * 1e3:+.2f} ms | "
              f"{ttft99[target] / ttft99['relay']:.2f}× | | {chunk[target] / chunk['relay']:.2f}× "
              f"(runs {min(ratios):.2f}–{max(ratios):.2f}) | {request[target] / request['relay']:.2f}× | |", flush=True)


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
            med = lambda f, runs=runs: statistics.median(f(r) for r in runs)  # noqa: E731
            print(f"| {level} | {med(lambda r: percentile(r.ttft, 0.5)) * 1e3:.2f} ms | "
                  f"{med(lambda r: percentile(r.ttft, 0.99)) * 1e3:.2f} ms | {med(lambda r: r.deltas / r.wall):,.0f} | "
                  f"{med(lambda r: r.cpu / r.deltas * 1e6):.1f} | {sum(r.errors for r in runs)} |", flush=True)
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-relay"] and sys.argv[3:4] == ["uvloop"]:
        import uvloop
        uvloop.run(main())
    else:
        asyncio.run(main())
