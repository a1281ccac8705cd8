"""CPU cost per streamed delta: the SDK's own stream versus the agent's reading path.

Run by hand (not in CI):  .venv/bin/python bench/bench_agent.py [--chunks 2000] [--runs 9]

A ``hermes-gateway demo-llm`` subprocess serves a reply of ``--chunks`` text
chunks over a real socket (so its CPU is not counted). Each run, in the same
process and rotating order, measures ``time.process_time`` for

(a) the baseline: iterating the SDK's stream (``chat.completions.create(stream=True)``,
    a pydantic ``ChatCompletionChunk`` per chunk) — how the agent used to read;
(b) the agent's reading path alone: the fast transport (``agent/transport_fast.py``:
    the request on aiohttp, ``SSEPayloads`` parsing the body to dicts);
(c) the same reply through ``AIAgent.astream`` (path (b) plus the agent);
(d) through ``AIAgent.astream`` with ``model.transport: sdk`` (the SDK's public API).

The same for the Responses API (``model.api_mode: responses``): (a), (c) and (d).

Medians per delta. A second, socket-free measurement feeds the same SSE
bytes from memory (one network read per chunk) to the SDK's ``AsyncStream``,
to ``SSEPayloads`` and to the agent: parsing cost without HTTP, and the
agent's own machinery (guard, accumulation, event layers) as (agent − reader).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any, AsyncIterator, Awaitable, Callable

import openai
from openai._streaming import AsyncStream  # the baseline of the socket-free measurement only

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.agent.sse import SSEPayloads
from hermes_gateway._core.agent.transport import UpstreamTransport
from hermes_gateway._core.agent.upstream import Upstream
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.demo.transport import httpx
from hermes_gateway._core.events import TextDelta, TurnEnd


def _request(message: str) -> dict[str, Any]:
    return {"model": "demo", "messages": [{"role": "user", "content": message}], "stream": True,
            "stream_options": {"include_usage": True}}


async def sdk_stream(client: openai.AsyncOpenAI, message: str) -> tuple[float, int]:
    """(a) the baseline: the SDK's own stream of pydantic chunks."""
    start = time.process_time()
    stream = await client.chat.completions.create(**_request(message))
    count = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            count += 1
    return time.process_time() - start, count


async def reader_path(transport: UpstreamTransport, message: str) -> tuple[float, int]:
    """(b) the agent's reading path alone: the fast transport's request, body parsed by SSEPayloads."""
    start = time.process_time()
    count = await _count_payloads(await transport.open_stream("/chat/completions", _request(message)))
    return time.process_time() - start, count


async def _count_payloads(payloads: Any) -> int:
    count = 0
    try:
        while True:
            chunk = await payloads.next()
            choices = chunk.get("choices")
            if choices and (choices[0].get("delta") or {}).get("content"):
                count += 1
    except StopAsyncIteration:
        return count
    finally:
        await payloads.aclose()


async def through_agent(agent: AIAgent, message: str) -> tuple[float, int]:
    """(c) the whole agent."""
    start = time.process_time()
    count = 0
    async for event in agent.astream(message):
        if type(event) is TextDelta:
            count += 1
        elif type(event) is TurnEnd:
            assert event.error is None, event.error
    return time.process_time() - start, count


async def sdk_responses_stream(client: openai.AsyncOpenAI, message: str) -> tuple[float, int]:
    """(a) for the Responses API: the SDK's own stream of pydantic events."""
    start = time.process_time()
    stream = await client.responses.create(model="demo", input=[{"role": "user", "content": message}], stream=True)
    count = 0
    async for event in stream:
        if event.type == "response.output_text.delta":
            count += 1
    return time.process_time() - start, count


def _row(name: str, seconds: float, chunks: int, baseline: float) -> str:
    return (f"| {name} | {seconds * 1e3:.1f} | {seconds / chunks * 1e6:.1f} | "
            f"{seconds / baseline:.2f} |")


async def over_socket(chunks: int, runs: int, base_url: str, api_mode: str) -> None:
    message = "echo: " + " ".join(f"w{i}" for i in range(chunks))
    config = parse_config({"model": {"base_url": base_url, "name": "demo", "api_mode": api_mode}})
    agent = AIAgent.from_config(config, tools=[])
    sdk_config = parse_config({"model": {"base_url": base_url, "name": "demo", "api_mode": api_mode,
                                         "transport": "sdk"}})
    sdk_agent = AIAgent.from_config(sdk_config, tools=[])
    upstream = agent._pool.all()[0]
    client = sdk_agent._pool.all()[0].client  # the very client the sdk transport uses: same HTTP settings
    if api_mode == "responses":
        cases: list[tuple[str, Callable[[], Awaitable[tuple[float, int]]]]] = [
            ("(a) SDK stream, pydantic events (baseline)", lambda: sdk_responses_stream(client, message)),
            ("(c) through AIAgent.astream", lambda: through_agent(agent, message)),
        ]
    else:
        cases = [
            ("(a) SDK stream, pydantic chunks (baseline)", lambda: sdk_stream(client, message)),
            ("(b) fast transport (aiohttp + SSEPayloads)", lambda: reader_path(upstream.transport, message)),
            ("(c) through AIAgent.astream", lambda: through_agent(agent, message)),
        ]
    # (d) in a phase of its own, after (a)-(c): rotated in with them, its allocations (a pydantic model per
    # chunk, twice the baseline's garbage) made (c) look ~10 % slower than it is alone (bench/README.md).
    later = [("(d) AIAgent.astream, transport: sdk", lambda: through_agent(sdk_agent, message))]
    times: dict[str, list[float]] = {name: [] for name, _ in cases + later}
    for group in (cases, later):
        for _, case in group:  # warm up (imports, connection pools)
            await case()
        for i in range(runs):
            shift = i % len(group)
            for name, case in group[shift:] + group[:shift]:  # rotate the order each run
                seconds, count = await case()
                assert count == chunks, (name, count)
                times[name].append(seconds)
    await agent.aclose()
    await sdk_agent.aclose()
    medians = {name: statistics.median(t) for name, t in times.items()}
    baseline = medians[cases[0][0]]
    api = "Responses API" if api_mode == "responses" else "Chat Completions"
    print(f"\n{api} over a socket to demo-llm: {chunks} chunks x {runs} runs (CPU time, medians)\n")
    print("| path | ms per reply | µs per delta | × baseline |\n| --- | ---: | ---: | ---: |")
    for name, median in medians.items():
        print(_row(name, median, chunks, baseline))


# -- without a socket -----------------------------------------------------------------------------

def _sse_body(chunks: int) -> list[bytes]:
    """The reply as demo-llm frames it, one network read per chunk."""
    def frame(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        body: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                "choices": choices}
        if usage:
            body["usage"] = usage
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    reads = [frame([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    reads += [frame([{"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}]) for i in range(chunks)]
    reads.append(frame([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    reads.append(frame([], {"prompt_tokens": 1, "completion_tokens": chunks, "total_tokens": chunks + 1}))
    reads.append(b"data: [DONE]\n\n")
    return reads


def _response(reads: list[bytes]) -> Any:
    async def body() -> AsyncIterator[bytes]:
        for read in reads:
            yield read
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body(),
                          request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"))


async def in_memory(chunks: int, runs: int) -> None:
    reads = _sse_body(chunks)
    sdk_client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")

    async def sdk() -> float:
        start = time.process_time()
        stream = AsyncStream(cast_to=openai.types.chat.ChatCompletionChunk, response=_response(reads),
                             client=sdk_client)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pass
        return time.process_time() - start

    async def reader() -> float:
        start = time.process_time()
        await _count_payloads(SSEPayloads(_response(reads)))
        return time.process_time() - start

    async def open_stream(*_: object, **__: object) -> Any:  # what the agent calls: transport.open_stream(...)
        return SSEPayloads(_response(reads))

    fake = SimpleNamespace(kind="fast", open_stream=open_stream)
    agent = AIAgent.from_config(parse_config({"model": {"base_url": "http://unused/v1", "name": "m"}}), tools=[])
    upstream = Upstream(agent.model.endpoint, sdk_client, fake)  # type: ignore[arg-type]
    agent._pool.all = lambda: [upstream]  # type: ignore[method-assign]

    async def agent_path() -> float:
        start = time.process_time()
        async for event in agent.astream("x"):
            if type(event) is TurnEnd:
                assert event.error is None, event.error
        return time.process_time() - start

    cases = [("SDK AsyncStream, pydantic chunks (baseline)", sdk), ("SSEPayloads", reader),
             ("AIAgent.astream over SSEPayloads", agent_path)]
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for i in range(runs * 3):
        for name, case in cases[i % 3:] + cases[:i % 3]:
            times[name].append(await case())
    medians = {name: statistics.median(t) for name, t in times.items()}
    baseline = medians[cases[0][0]]
    print(f"\nfrom memory, no socket: {chunks} chunks x {runs * 3} runs (CPU time, medians)\n")
    print("| path | ms per reply | µs per delta | × baseline |\n| --- | ---: | ---: | ---: |")
    for name, median in medians.items():
        print(_row(name, median, chunks, baseline))
    agent_alone = (medians[cases[2][0]] - medians[cases[1][0]]) / chunks * 1e6
    print(f"\nagent machinery alone (agent − reader): {agent_alone:.2f} µs/delta")


async def alone(chunks: int, runs: int, base_url: str, api_mode: str) -> None:
    """(c) with nothing else in the process: 5 replies to warm up, then the median of ``runs``."""
    message = "echo: " + " ".join(f"w{i}" for i in range(chunks))
    agent = AIAgent.from_config(parse_config({"model": {"base_url": base_url, "name": "demo", "api_mode": api_mode}}),
                                tools=[])
    times = []
    for i in range(runs + 5):
        seconds, count = await through_agent(agent, message)
        assert count == chunks, count
        if i >= 5:
            times.append(seconds)
    await agent.aclose()
    print(f"{api_mode}: (c) alone, {chunks} chunks x {runs} runs: {statistics.median(times) * 1e3:.3f} ms per reply")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--alone", action="store_true", help="only (c), with nothing else in the process")
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0",
                               "--tokens-per-second", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        match = re.search(r"(http://\S+/v1)", line)
        if not match:
            sys.exit(f"demo-llm did not start: {line!r}")
        if args.alone:
            for mode in ("chat_completions", "responses"):
                asyncio.run(alone(args.chunks, args.runs, match.group(1), mode))
            return
        asyncio.run(over_socket(args.chunks, args.runs, match.group(1), "chat_completions"))
        asyncio.run(over_socket(args.chunks, args.runs, match.group(1), "responses"))
        asyncio.run(in_memory(args.chunks, args.runs))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    run()
