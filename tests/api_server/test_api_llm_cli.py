"""Simon Willison's ``llm`` CLI against the gateway, configured the documented way (``extra-openai-models.yaml``).

Two models point at the gateway, one over Chat Completions and one over
Responses (``responses: true``). The CLI runs a ``--functions`` tool the
demo model calls and answers with its result, and prints a ``--schema``
object; llm's async Python API (the CLI's model classes) does each on the
other endpoint and streams an answer in more than one piece. (llm drops the
schema on a chain's follow-up turn, so tool and schema are separate runs.) Marked ``frameworks``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")

from api_helpers import MODEL, gateway_config, running_gateway  # noqa: E402

pytestmark = pytest.mark.frameworks

FUNCTIONS = '''
def population(city: str) -> str:
    "How many people live in a city."
    return "about 700000 in " + city
'''


def write_models(user_path: Path, url: str) -> None:
    lines = []
    for model_id, extra in (("gw-chat", ""), ("gw-responses", "  responses: true\n")):
        lines.append(f"- model_id: {model_id}\n  model_name: {MODEL}\n  api_base: {url}/v1\n"
                     f"  supports_tools: true\n  supports_schema: true\n{extra}")
    (user_path / "extra-openai-models.yaml").write_text("".join(lines))


async def run_llm(env: dict, *args: str) -> tuple[str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "llm", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode(), err.decode()


def population(city: str) -> str:
    "How many people live in a city."
    return "about 700000 in " + city


async def test_the_llm_cli_runs_a_tool_fills_a_schema_and_streams(tmp_path, monkeypatch):
    async with running_gateway(gateway_config()) as gw:
        # two CLI runs (a CLI start costs seconds of CPU), each with its own user directory, as two llm
        # processes race to create one logs.db: a tool over Chat Completions, a schema over Responses
        runs = []
        for model_id, args in (("gw-chat", ("--functions", FUNCTIONS, "--td", "Use population for Oslo")),
                               ("gw-responses", ("--schema", "name, population int", "Oslo"))):
            home = tmp_path / model_id
            home.mkdir()
            write_models(home, gw.url)
            env = {**os.environ, "LLM_USER_PATH": str(home), "OPENAI_API_KEY": "unused"}
            runs.append(run_llm(env, "-n", "-m", model_id, *args))
        (answer, debug), (printed, _) = await asyncio.gather(*runs)
        assert "Tool call: population(" in debug   # --td (on stderr) shows the call llm ran
        assert "about 700000 in" in answer         # and the model answered with its result
        city = json.loads(printed)
        assert isinstance(city["name"], str) and isinstance(city["population"], int)

        # the other way round through llm's async Python API (the CLI's model classes), and streamed
        write_models(tmp_path, gw.url)
        monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        chat, responses = llm.get_async_model("gw-chat"), llm.get_async_model("gw-responses")
        city = json.loads(await chat.prompt("Oslo", schema=llm.schema_dsl("name, population int")).text())
        assert isinstance(city["population"], int)
        assert "about 700000 in" in await responses.chain("Use population for Oslo", tools=[population]).text()
        for model in (chat, responses):
            pieces = [piece async for piece in model.prompt("echo: one two three four five")]
            assert "".join(pieces) == "one two three four five" and len(pieces) > 1, model.model_id
