"""``hermes-gateway run`` imports nothing its config does not use (issue 39: idle memory, every start's CPU).

A gateway started with an OpenAI-compatible endpoint (the fast transport), no platform, no MCP server, no
voice, no telemetry and no schedules must not have loaded Pillow, pypdf, PyAV, the MCP SDK, OpenTelemetry or
croniter once it is serving, nor the ``openai`` SDK (the fast transport makes its headers without it), nor httpx's command-line tool
(rich, click, pygments) when something imports httpx. Checked in one child process, because which modules
are loaded is process-wide and other tests load them all; the child stops itself once started.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from cli_helpers import DEADLINE, child_env

CHILD = textwrap.dedent("""
    import asyncio, gc, json, os, signal, sys

    from hermes_gateway._core.cli import run as run_command
    from hermes_gateway._core.config import parse_config

    seen = {}
    real_freeze = gc.freeze

    def freeze():  # ``run`` freezes its heap once it serves: look at what is loaded then, and stop
        real_freeze()
        seen["serving"] = sorted(m for m in sys.modules if sys.modules[m] is not None)
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGINT)

    gc.freeze = freeze
    run_command.without_httpx_cli()
    config = parse_config({"api_server": {"port": 0}, "store": {"path": sys.argv[1]},
                           "model": json.loads(sys.argv[2])}, env={})
    code = asyncio.run(run_command.serve(config))
    import httpx  # as python-telegram-bot and the Teams SDK do, once the platform is on
    httpx.AsyncClient  # still usable
    seen["after_httpx"] = sorted(m for m in sys.modules if sys.modules[m] is not None)
    print(json.dumps({"exit": code, **seen}))
""")

HEAVY = ("PIL", "pypdf", "av", "mcp", "opentelemetry", "croniter")
#: The openai SDK (with httpx2 and pydantic): only the sdk transport needs it; a gateway that serves the API on
#: it loads it before it serves (api_server/plugin.py warm_modules: loaded on the first request instead, its pydantic models held the GIL
#: and /health stalled 0.7 s); one without the API server makes it on its first model request.
SDK = ("openai", "httpx2", "pydantic")
HTTPX_CLI = ("httpx._main", "rich", "click", "pygments")


def loaded(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted({m.split(".")[0] if m.split(".")[0] in packages else m for m in modules
                   if m in packages or m.split(".")[0] in packages})


ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x", "name": "m"}


def serve_once(tmp_path, model: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "state.db"), json.dumps(model)],
                          capture_output=True, text=True, env=child_env(tmp_path / "home"), cwd=tmp_path,
                          timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("hermes-gateway: listening on http://127.0.0.1:")
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["exit"] == 0
    return seen


def test_a_gateway_without_those_features_serves_without_their_libraries(tmp_path):
    seen = serve_once(tmp_path, ENDPOINT)
    assert "hermes_gateway._core.agent.upstream" in seen["serving"]  # the agent is loaded at start (issue 26)
    assert loaded(seen["serving"], HEAVY) == []
    assert loaded(seen["serving"], SDK) == []  # the fast transport makes the SDK's headers without it
    assert loaded(seen["after_httpx"], HTTPX_CLI) == []
    assert "httpx" in seen["after_httpx"]


def test_a_gateway_on_the_sdk_transport_warms_the_sdk_before_serving(tmp_path):
    """Its first request would otherwise import the SDK in a thread while /health waits on the GIL."""
    seen = serve_once(tmp_path, {**ENDPOINT, "transport": "sdk"})
    assert loaded(seen["serving"], SDK) == sorted(SDK)
    assert loaded(seen["serving"], HEAVY) == []


def test_a_demo_gateway_serves_without_the_openai_sdk(tmp_path):
    """The demo model on the fast transport is called in-process (agent/transport_demo.py): no SDK to warm."""
    seen = serve_once(tmp_path, {"demo": {"tokens_per_second": 0}})
    assert "hermes_gateway._core.agent.upstream" in seen["serving"]
    assert loaded(seen["serving"], SDK) == []
    assert loaded(seen["serving"], HEAVY) == []
