"""The suite is hermetic: a plugin installed on the machine, or a process on the default port, changes no test.

The third-party plugin here is installed as far as ``importlib.metadata``
can tell (a dist-info folder on the ``PYTHONPATH`` of a subprocess), not
mocked, and it is hostile: a platform, a tool, a command and an HTTP route
(a route makes a gateway open its listener, on 8642 unless told otherwise).
The suite's root ``conftest.py`` empties ``HERMES_LOAD_PLUGINS``, so
none of it reaches a core test unless the test asks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fake_dist import install_dist

ROOT = Path(__file__).resolve().parents[1]

INTRUDER = """
    import hermes_gateway
    from aiohttp import web

    @hermes_gateway.hookimpl
    def register_platforms(register):
        register(hermes_gateway.Platform(name="intruder"))

    @hermes_gateway.hookimpl
    def on_stream_end(stream, message, text):
        return message

    @hermes_gateway.hookimpl
    def register_tools(register):
        register(hermes_gateway.Tool("intrude", "a tool nobody asked for", lambda: "boo"))

    @hermes_gateway.hookimpl
    def register_commands(register):
        async def run(ctx):
            return "boo"
        register(hermes_gateway.Command("intrude", "a command nobody asked for", run))

    @hermes_gateway.hookimpl
    def register_routes(app, gateway):
        async def boo(request):
            return web.Response(text="boo")
        app.router.add_get("/intrude", boo)
"""

#: What a core test can see of the installed plugins, printed as JSON by a fresh process.
SEEN = """
import json
from hermes_gateway import installed_plugins
from hermes_gateway._core.tools import installed_tools
plugins = installed_plugins()
commands = []
plugins.pm.hook.register_commands(register=commands.append, config=None)
print(json.dumps({"platforms": sorted(plugins.platforms()), "tools": sorted(t.name for t in installed_tools()),
                  "commands": sorted(c.name for c in commands), "problems": [str(p) for p in plugins.problems],
                  "plugins": sorted(plugins.origins)}))
"""


@pytest.fixture
def intruder(tmp_path: Path) -> Path:
    """The folder holding the installed intruder (put it on PYTHONPATH)."""
    return install_dist(tmp_path / "site", "hg_intruder", INTRUDER, "intruder = hg_intruder")


#: Run a command while this process listens on 127.0.0.1:8642, the API server's default port.
HOLDING_8642 = """
import socket, subprocess, sys
taken = socket.socket()
taken.bind(("127.0.0.1", 8642))
taken.listen(1)
sys.exit(subprocess.call(sys.argv[1:]))
"""


@pytest.fixture
def private_network() -> list[str]:
    """A command prefix running in a network namespace of its own (``unshare -n``, loopback up): there the
    suite can take 127.0.0.1:8642 without touching the port of anything else running on this machine."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        pytest.skip("needs unshare(1) and ip(8) for a private network namespace")
    prefix = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no private network namespace here: {probe.stderr.decode().strip()}")
    return prefix


def run(args: list[str], *, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def with_site(env: dict[str, str], site: Path) -> dict[str, str]:
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))}


def seen(env: dict[str, str]) -> dict:
    result = run(["-c", SEEN], env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_suite_loads_no_installed_plugin_unless_a_test_asks():
    assert os.environ["HERMES_LOAD_PLUGINS"] == ""


def test_an_installed_plugin_changes_nothing_a_core_test_sees(intruder: Path):
    suite = dict(os.environ)
    assert seen(with_site(suite, intruder)) == seen(suite)
    plugins_cmd = ["-m", "hermes_gateway", "plugins", "--config", os.devnull]
    assert run(plugins_cmd, env=with_site(suite, intruder)).stdout == run(plugins_cmd, env=suite).stdout

    everything = {k: v for k, v in suite.items() if k != "HERMES_LOAD_PLUGINS"}
    loaded = seen(with_site(everything, intruder))  # without the switch, as a person's machine runs
    assert "intruder" in loaded["platforms"] and "intrude" in loaded["tools"] and "intrude" in loaded["commands"]
    asked = seen(with_site({**suite, "HERMES_LOAD_PLUGINS": "intruder"}, intruder))
    assert asked["plugins"] == sorted([*seen(suite)["plugins"], "intruder"]), "only the plugin asked for"


@pytest.mark.long  # a pytest run of its own: started first, beside the rest of the suite
@pytest.mark.timeout(600)  # the nested run's own bound (below); the default 120 s is too close on a busy machine
def test_core_tests_pass_with_a_plugin_installed_and_the_default_port_taken(intruder: Path,
                                                                             private_network: list[str]):
    """Core tests that list plugins, platforms or tools, or start a gateway or ``hermes-gateway run`` (without
    the switch the intruder's tool reaches the model and the agent's tool-loop test fails)."""
    files = ["tests/test_plugins.py", "tests/agent/test_agent_tool_loop.py", "tests/api_server/test_api_run_command.py"]
    # (the `plugins` command's output with the intruder installed: the test above)
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *files]  # in-process
    result = subprocess.run([*private_network, sys.executable, "-c", HOLDING_8642, *pytest_run], capture_output=True,
                            text=True, timeout=600, env=with_site(dict(os.environ), intruder), cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "error" not in result.stdout.splitlines()[-1]
