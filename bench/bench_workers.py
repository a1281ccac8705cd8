"""``api_server.workers``: chunks per second with 1 and with N workers, in a CPU-bound workload (issue 28 item 4).

Run by hand, not in CI. It starts a nearly free upstream (``--serve-upstream``:
every reply is one pre-built Chat Completions SSE body of ``--chunks`` chunks,
written at once, so the gateway receives them back to back), then for each
worker count ``hermes-gateway run --workers N`` in front of it, and streams
``--streams`` requests, ``--concurrency`` at a time, each on its own
connection (so the kernel spreads them over the workers). Nothing is pinned:
the gateway's workers, the upstream and this load generator share the
machine's cores, as the issue asks.

For each run it prints upstream chunks relayed per second (streams x chunks /
wall time) and the CPU seconds per chunk of the gateway (every worker and the
parent, from /proc), of the upstream and of the load generator, and then the
time to first token of a burst of ``--burst`` requests sent at once (p50,
p99: the burst queues behind each request's fixed cost, which N workers
share out); then the
medians over ``--repeats`` runs (the worker counts alternate within each
repeat, so a slow minute of the shared machine hits both) and the ratio of
the medians. The last two lines project from the CPU per chunk (less noisy
than wall time on a shared machine): what these cores would give if nothing
else ran on them (N workers: min(N / gateway, cores / (gateway + upstream +
load)) chunks/s), and each worker's share on a machine with more cores.

    .venv/bin/python bench/bench_workers.py                          # 1 vs 2 workers, 3 repeats
    .venv/bin/python bench/bench_workers.py --workers 1 2 --repeats 5 --streams 4000

Every stream must end with ``[DONE]`` and the first one of each run is checked
word for word; a run with any error is reported as such.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

sys.path.insert(0, str(Path(__file__).parent))
from bench_api_server import cpu_seconds as process_cpu  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, from its threads' schedstat (ns; see the API benchmark); 0 once it is gone."""
    try:
        return process_cpu(pid)
    except FileNotFoundError:
        return 0.0


def self_cpu() -> float:
    times = os.times()
    return times.user + times.system


# -- the upstream --------------------------------------------------------------------------------------------


def sse_body(chunks: int) -> bytes:
    """A whole Chat Completions stream: ``chunks`` content deltas, the finish, usage and ``[DONE]``."""
    def event(payload: dict) -> bytes:
        return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"

    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "demo"}
    parts = [event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                          "finish_reason": None}]})]
    parts += [event({**base, "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}]})
              for i in range(chunks)]
    parts.append(event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    parts.append(event({**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": chunks,
                                                          "total_tokens": chunks + 5}}))
    return b"".join(parts) + b"data: [DONE]\n\n"


def expected_text(chunks: int) -> str:
    return "".join(f"w{i} " for i in range(chunks))


async def serve_upstream(chunks: int) -> None:
    from aiohttp import web

    body = sse_body(chunks)

    async def completions(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        await response.write(body)  # every chunk at once: the gateway gets them back to back
        await response.write_eof()
        return response

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "demo", "object": "model"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    print(f"listening on http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.Event().wait()


# -- the gateway and the load --------------------------------------------------------------------------------


@dataclass
class Result:
    workers: int
    chunks_per_s: float
    gateway_cpu_per_chunk: float
    upstream_cpu_per_chunk: float
    load_cpu_per_chunk: float
    errors: int
    ttft_p50: float  # a burst of --burst requests at once: time to the first content delta
    ttft_p99: float


async def start(*args: str, pattern: str) -> tuple[asyncio.subprocess.Process, re.Match[str]]:
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
    match = re.search(pattern, line)
    if not match:
        proc.kill()
        raise SystemExit(f"could not start {args[2:4]}: {line!r}")
    return proc, match


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


async def one_stream(url: str, body: dict, check: str | None) -> bool:
    """One stream on a connection of its own; True when it ended properly (and, with ``check``, said exactly it)."""
    connector = aiohttp.TCPConnector(force_close=True)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=300)) as session:
            async with session.post(url, json=body) as response:
                data = await response.read()
                if response.status != 200 or not data.rstrip().endswith(b"data: [DONE]"):
                    return False
                if check is None:
                    return True
                text = ""
                for line in data.split(b"\n"):
                    if line.startswith(b"data: {"):
                        for choice in json.loads(line[6:]).get("choices", []):
                            text += choice.get("delta", {}).get("content") or ""
                return text.strip() == check.strip()  # the gateway re-spaces tokens ("w1 " -> " w1")
    except (aiohttp.ClientError, asyncio.TimeoutError):
        return False


async def raw_stream(host: str, port: int, request: bytes) -> bool:
    """One stream as cheaply as a client can read it (the load generator shares the cores it measures): a raw
    HTTP/1.1 request with ``Connection: close``, everything read until the server closes, the status and the
    final ``[DONE]`` checked."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(request)
        data = await reader.read(-1)
        writer.close()
    except OSError:
        return False
    return data.startswith(b"HTTP/1.1 200") and b"data: [DONE]" in data[-64:]


CONTENT = re.compile(rb'"content":\s*"[^"]')


async def raw_first_token(host: str, port: int, request: bytes) -> float | None:
    """Seconds from sending the request to the first content delta (then the rest is read); None on failure."""
    started = time.perf_counter()
    first = None
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(request)
        seen = b""
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if first is None:
                seen = seen[-64:] + data
                if CONTENT.search(seen):
                    first = time.perf_counter() - started
        writer.close()
    except OSError:
        return None
    return first


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


async def measure(workers: int, upstream_url: str, upstream_pid: int, args: argparse.Namespace) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(f"api_server: {{port: 0, max_concurrent_streams: 10000}}\n"
                          f"model: {{base_url: '{upstream_url}', name: demo}}\n"
                          f"store: {{path: '{tmp}/state.db'}}\n")
        gateway, found = await start(sys.executable, "-m", "hermes_gateway", "run", "--config", str(config),
                                     "--workers", str(workers),
                                     pattern=r"listening on (http://\S+)(?:.*?workers \(pids ([\d, ]+)\))?")
        try:
            url = f"{found.group(1)}/v1/chat/completions"
            pids = [int(p) for p in found.group(2).split(", ")] if found.group(2) else []
            pids.append(gateway.pid)
            body = {"model": "hermes-gateway", "stream": True, "messages": [{"role": "user", "content": "go"}]}
            for _ in range(2 * workers):  # warm every worker (imports, the upstream pool)
                await one_stream(url, body, None)
            ok = await one_stream(url, body, expected_text(args.chunks))
            sem = asyncio.Semaphore(args.concurrency)
            payload = json.dumps(body).encode()
            address = urlsplit(url)
            request = (f"POST {address.path} HTTP/1.1\r\nHost: {address.netloc}\r\nContent-Type: application/json\r\n"
                       f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode() + payload

            async def limited() -> bool:
                async with sem:
                    return await raw_stream(str(address.hostname), int(address.port or 80), request)

            gateway0 = sum(cpu_seconds(pid) for pid in pids)
            upstream0, load0 = cpu_seconds(upstream_pid), self_cpu()
            started = time.perf_counter()
            results = await asyncio.gather(*(limited() for _ in range(args.streams)))
            wall = time.perf_counter() - started
            chunks = args.streams * args.chunks
            gateway_cpu = sum(cpu_seconds(pid) for pid in pids) - gateway0
            host, port = str(address.hostname), int(address.port or 80)
            await asyncio.sleep(0.5)  # the throughput run's connections close
            ttfts = await asyncio.gather(*(raw_first_token(host, port, request) for _ in range(args.burst)))
            firsts = [t for t in ttfts if t is not None]
            return Result(workers, chunks / wall, gateway_cpu / chunks,
                          (cpu_seconds(upstream_pid) - upstream0) / chunks, (self_cpu() - load0) / chunks,
                          results.count(False) + (0 if ok else 1) + len(ttfts) - len(firsts),
                          percentile(firsts, 0.5), percentile(firsts, 0.99))
        finally:
            await stop(gateway)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare (1 2)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each worker count (3)")
    parser.add_argument("--streams", type=int, default=2000, help="streams per run (2000)")
    parser.add_argument("--concurrency", type=int, default=50, help="streams open at once (50)")
    parser.add_argument("--chunks", type=int, default=200, help="chunks per stream (200)")
    parser.add_argument("--burst", type=int, default=200, help="requests sent at once for time to first token (200)")
    args = parser.parse_args()
    if args.serve_upstream:
        await serve_upstream(args.chunks)
        return
    upstream, found = await start(sys.executable, __file__, "--serve-upstream", "--chunks", str(args.chunks),
                                  pattern=r"listening on (http://\S+)")
    results: dict[int, list[Result]] = {n: [] for n in args.workers}
    try:
        for repeat in range(args.repeats):
            order = args.workers if repeat % 2 == 0 else list(reversed(args.workers))
            for workers in order:
                result = await measure(workers, found.group(1), upstream.pid, args)
                results[workers].append(result)
                print(f"run {repeat + 1}, {workers} worker(s): {result.chunks_per_s:,.0f} chunks/s; CPU per chunk: "
                      f"gateway {result.gateway_cpu_per_chunk * 1e6:.1f} us, upstream "
                      f"{result.upstream_cpu_per_chunk * 1e6:.1f} us, load {result.load_cpu_per_chunk * 1e6:.1f} us"
                      f"; burst of {args.burst}: first token p50 {result.ttft_p50 * 1e3:.0f} ms, p99 "
                      f"{result.ttft_p99 * 1e3:.0f} ms; errors {result.errors}", flush=True)
    finally:
        await stop(upstream)
    print(f"\nmedians of {args.repeats} runs ({args.streams} streams x {args.chunks} chunks, "
          f"{args.concurrency} at once, {os.cpu_count()} cores):")
    medians = {n: statistics.median(r.chunks_per_s for r in rs) for n, rs in results.items()}
    base = medians[args.workers[0]]
    for n, rs in results.items():
        cpu = statistics.median(r.gateway_cpu_per_chunk for r in rs)
        rest = statistics.median(r.upstream_cpu_per_chunk + r.load_cpu_per_chunk for r in rs)
        print(f"  {n} worker(s): {medians[n]:,.0f} chunks/s ({medians[n] / base:.2f}x {args.workers[0]}); gateway "
              f"CPU {cpu * 1e6:.1f} us/chunk, upstream + load {rest * 1e6:.1f} us/chunk; burst first token p50 "
              f"{statistics.median(r.ttft_p50 for r in rs) * 1e3:.0f} ms, p99 "
              f"{statistics.median(r.ttft_p99 for r in rs) * 1e3:.0f} ms; errors {sum(r.errors for r in rs)}")
    cores = os.cpu_count() or 1
    idle = {}
    for n, rs in results.items():  # what the CPU per chunk allows when nothing else runs on these cores
        gateway = statistics.median(r.gateway_cpu_per_chunk for r in rs)
        rest = statistics.median(r.upstream_cpu_per_chunk + r.load_cpu_per_chunk for r in rs)
        idle[n] = min(min(n, cores) / gateway, cores / (gateway + rest))
    first = idle[args.workers[0]]
    print(f"on {cores} idle cores shared with the upstream and the clients, the CPU per chunk allows: "
          + ", ".join(f"{n} worker(s) {idle[n]:,.0f} chunks/s ({idle[n] / first:.2f}x)" for n in idle))
    cpu = statistics.median(r.gateway_cpu_per_chunk for rs in results.values() for r in rs)
    print(f"more cores: at {cpu * 1e6:.1f} us of gateway CPU per chunk, each worker on a core of its own relays "
          f"about {1 / cpu:,.0f} chunks/s, so N workers on N free cores about N x that (the upstream and the "
          f"clients elsewhere), until the store or the network is the limit")


if __name__ == "__main__":
    asyncio.run(main())
