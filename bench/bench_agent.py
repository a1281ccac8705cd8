"""CPU cost the agent adds on top of the openai SDK, per streamed delta.

Run by hand (not in CI):  .venv/bin/python bench/bench_agent.py [--chunks 2000] [--runs 9]

A ``hermes-gateway demo-llm`` subprocess serves a reply of ``--chunks`` text
chunks over a real socket (so its CPU is not counted). Each run, in the same
process and alternating order, measures ``time.process_time`` for
(a) iterating the raw SDK stream (``chat.completions.create(stream=True)``)
and (b) the same reply through ``AIAgent.astream``. The difference of the
medians divided by the chunk count is the agent's own cost per delta.

Because the SDK's own parsing (~100 us per chunk) makes that difference
noisy, a second, isolated measurement feeds the agent pre-parsed
``ChatCompletionChunk`` objects from an in-memory stand-in for the SDK
stream, and compares with iterating the same objects directly: the agent's
machinery alone (guard, accumulation, event layers).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import time

from types import SimpleNamespace

import openai
from openai.types.chat import ChatCompletionChunk

from hermes_gateway.agent import AIAgent
from hermes_gateway.config import parse_config
from hermes_gateway.agent.upstream import Upstream
from hermes_gateway.events import TextDelta, TurnEnd


async def raw_sdk(client: openai.AsyncOpenAI, message: str) -> tuple[float, int]:
    start = time.process_time()
    stream = await client.chat.completions.create(model="demo", messages=[{"role": "user", "content": message}],
                                                  stream=True, stream_options={"include_usage": True})
    count = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            count += 1
    return time.process_time() - start, count


async def through_agent(agent: AIAgent, message: str) -> tuple[float, int]:
    start = time.process_time()
    count = 0
    async for event in agent.astream(message):
        if type(event) is TextDelta:
            count += 1
        elif type(event) is TurnEnd:
            assert event.error is None, event.error
    return time.process_time() - start, count


async def main(chunks: int, runs: int, base_url: str) -> None:
    message = "echo: " + " ".join(f"w{i}" for i in range(chunks))
    config = parse_config({"model": {"base_url": base_url, "name": "demo"}})
    agent = AIAgent.from_config(config, tools=[])
    client = agent._pool.all()[0].client  # the very client the agent uses: same HTTP settings
    raw_times, agent_times = [], []
    await raw_sdk(client, message)  # warm up both paths (imports, connection pools)
    await through_agent(agent, message)
    for i in range(runs):
        order = [("raw", raw_sdk(client, message)), ("agent", through_agent(agent, message))]
        if i % 2:
            order.reverse()
        for name, coro in order:
            seconds, count = await coro
            assert count == chunks, (name, count)
            (raw_times if name == "raw" else agent_times).append(seconds)
    await agent.aclose()
    raw_median, agent_median = statistics.median(raw_times), statistics.median(agent_times)
    print(f"{chunks} chunks x {runs} runs (CPU time, medians)")
    print(f"  raw SDK stream : {raw_median * 1e3:8.1f} ms  = {raw_median / chunks * 1e6:6.1f} us/delta")
    print(f"  through AIAgent: {agent_median * 1e3:8.1f} ms  = {agent_median / chunks * 1e6:6.1f} us/delta")
    print(f"  agent overhead : {(agent_median - raw_median) / chunks * 1e6:6.2f} us/delta "
          f"({(agent_median / raw_median - 1) * 100:.1f}% on top of the SDK)")


class _ParsedStream:
    """Quacks like the SDK's AsyncStream over chunks parsed in advance."""

    def __init__(self, chunks: list[ChatCompletionChunk]) -> None:
        self._it = iter(chunks)
        self.response = SimpleNamespace(headers={"content-type": "text/event-stream"})

    def __aiter__(self) -> "_ParsedStream":
        return self

    async def __anext__(self) -> ChatCompletionChunk:
        for chunk in self._it:
            return chunk
        raise StopAsyncIteration

    async def close(self) -> None:
        pass


async def isolated(chunks: int, runs: int) -> None:
    def chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> ChatCompletionChunk:
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []}
        if usage:
            body["usage"] = usage
        return ChatCompletionChunk.model_validate(body)

    parsed = [chunk({"content": f" w{i}"}) for i in range(chunks)] + [chunk({}, "stop"), chunk({}, usage={
        "prompt_tokens": 1, "completion_tokens": chunks, "total_tokens": chunks + 1})]

    async def create(**_: object) -> _ParsedStream:
        return _ParsedStream(parsed)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    agent = AIAgent.from_config(parse_config({"model": {"base_url": "http://unused/v1", "name": "m"}}), tools=[])
    upstream = Upstream(agent.model.endpoint, client)  # type: ignore[arg-type]
    agent._pool.all = lambda: [upstream]  # type: ignore[method-assign]

    async def direct() -> float:
        start = time.process_time()
        async for item in await create():
            if item.choices and item.choices[0].delta.content:
                pass
        return time.process_time() - start

    async def agent_path() -> float:
        start = time.process_time()
        async for event in agent.astream("x"):
            pass
        return time.process_time() - start

    direct_times = [await direct() for _ in range(runs * 3)]
    agent_times = [await agent_path() for _ in range(runs * 3)]
    d, a = statistics.median(direct_times), statistics.median(agent_times)
    print(f"isolated, pre-parsed chunks, {chunks} x {runs * 3} runs (CPU time, medians)")
    print(f"  agent machinery alone: {(a - d) / chunks * 1e6:6.2f} us/delta")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-m", "hermes_gateway", "demo-llm", "--port", "0",
                               "--tokens-per-second", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        match = re.search(r"(http://\S+/v1)", line)
        if not match:
            sys.exit(f"demo-llm did not start: {line!r}")
        asyncio.run(main(args.chunks, args.runs, match.group(1)))
        asyncio.run(isolated(args.chunks, args.runs))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    run()
