"""The openai npm SDK's stream helpers finish with the gateway's tool progress on (issue 34).

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


def _npm_clients() -> Path | None:
    """The folder with the pinned openai package installed (installed now if npm can), or None."""
    if shutil.which("node") is None:
        return None
    if not (NPM_DIR / "node_modules" / "openai").is_dir() and shutil.which("npm") is not None:
        subprocess.run(["npm", "ci", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund", "-q"],
                       capture_output=True, timeout=300, check=False)
    return NPM_DIR if (NPM_DIR / "node_modules" / "openai").is_dir() else None


async def test_the_npm_sdk_stream_helpers_finish_with_tool_progress_on():
    folder = _npm_clients()
    if folder is None:
        pytest.skip("node or the openai npm package is not installed (npm ci --prefix tests/api_server/npm)")
    async with running_gateway(gateway_config(api={"tool_progress_events": True})) as gw:
        process = await asyncio.create_subprocess_exec(
            "node", str(folder / "helpers.mjs"), f"{gw.url}/v1", MODEL, PROMPT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()[-2000:]
    result = json.loads(stdout.decode().strip().splitlines()[-1])
    assert "42" in result["responses"] and "42" in result["chat"]
