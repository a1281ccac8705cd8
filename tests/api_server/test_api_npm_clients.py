"""The openai npm SDK's stream helpers, and the Vercel AI SDK, finish with the gateway's tool progress on (issue 34).

``responses.stream()`` threw ``Unhandled response stream event`` on the
progress events; they are SSE comments now, which every SSE parser skips.
The SDK is pinned in ``tests/api_server/npm`` (installed by ``.ci/run``, or
here when npm is at hand); without node or the package this skips in one line.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from api_helpers import MODEL, gateway_config, running_gateway

NPM_DIR = Path(__file__).parent / "npm"
PROMPT = 'tool: calculate {"expression": "6 * 7"}'


PACKAGES = ("openai", "ai", "@ai-sdk/openai")


def _npm_clients() -> Path | None:
    """The folder with the pinned packages installed (installed now if npm can), or None."""
    if shutil.which("node") is None:
        return None

    def installed() -> bool:
        return all((NPM_DIR / "node_modules" / name / "package.json").is_file() for name in PACKAGES)
    if not installed() and shutil.which("npm") is not None:
        subprocess.run(["npm", "ci", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund", "-q"],
                       capture_output=True, timeout=300, check=False)
    return NPM_DIR if installed() else None


@pytest.mark.parametrize("script", ["helpers.mjs", "ai_sdk.mjs"])
async def test_the_npm_clients_finish_with_tool_progress_on(script):
    folder = _npm_clients()
    if folder is None:
        pytest.skip("node or the npm clients are not installed (npm ci --prefix tests/api_server/npm)")
    async with running_gateway(gateway_config(api={"tool_progress_events": True})) as gw:
        process = await asyncio.create_subprocess_exec(
            "node", str(folder / script), f"{gw.url}/v1", MODEL, PROMPT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    result = json.loads(stdout.decode().strip().splitlines()[-1])
    assert "42" in result["responses"] and "42" in result["chat"]
    if script == "ai_sdk.mjs":  # a client tool's arguments reach the AI SDK in pieces (tool-input-delta)
        assert result["responses_tool_input_deltas"] >= 3 and result["chat_tool_input_deltas"] >= 3, result
        for api in ("responses", "chat"):  # generateObject and streamObject (a json_schema format) get the object
            for key in (f"{api}_object", f"{api}_streamed_object"):
                assert isinstance(result[key]["name"], str) and isinstance(result[key]["population"], int), result
            assert result[f"{api}_partial_objects"] > 1, result  # the object grew as its JSON streamed in
