"""``hermes-gateway run`` as a real process, driven by the real clients, with the README's streaming switch on.

A request without ``stream`` is plain JSON even with ``streaming.enabled:
true`` and ``HERMES_STREAMING_ENABLED=true``; an Agents SDK agent calls its
``@function_tool`` through the process; the API conversations are then
listed by ``hermes-gateway history`` beside the chats.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest
import yaml

from api_helpers import MODEL

agents = pytest.importorskip("agents")
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool  # noqa: E402
from agents import set_tracing_disabled  # noqa: E402

set_tracing_disabled(True)


@function_tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return f"the sum is {a + b}"


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_"))}
    return {**env, "HERMES_HOME": str(tmp_path / "data"), "HERMES_STREAMING_ENABLED": "true", "HOME": str(tmp_path)}


async def test_real_process_plain_json_agents_sdk_and_history(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"api_server": {"port": 0}, "streaming": {"enabled": True},
                                      "store": {"path": str(tmp_path / "state.db")},
                                      "model": {"demo": {"tokens_per_second": 0}}}))
    env = environment(tmp_path)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hermes_gateway", "run", "--config",
                                                str(config), stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        match = re.search(r"listening on (http://\S+)", line)
        assert match, line
        client = openai.AsyncOpenAI(base_url=f"{match.group(1)}/v1", api_key="unused", max_retries=0)
        completion = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "echo: plain"}], store=True)
        assert completion.choices[0].message.content == "plain"  # an object, not an SSE string
        response = await client.responses.create(model=MODEL, input="echo: kept")
        assert response.output_text == "kept"
        for model in (OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
                      OpenAIResponsesModel(model=MODEL, openai_client=client)):
            agent = Agent(name="adder", tools=[add], model=model)
            result = await Runner.run(agent, "Use add on these")
            assert "the sum is" in result.final_output
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    listing = subprocess.run([sys.executable, "-m", "hermes_gateway", "history", "--config", str(config)],
                             capture_output=True, text=True, env=env, timeout=60)
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if re.search(r"\bapi\b", line)]
    assert any("echo: plain" in row for row in rows), listing.stdout
    assert any("echo: kept" in row for row in rows), listing.stdout
    assert any("Use add on" in row and re.search(r"\s2\s", row) for row in rows), listing.stdout  # both turns
