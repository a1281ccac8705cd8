"""``hermes-gateway doctor`` finds each seeded fault in one ✗ line that says what to fix, and exits 0 when healthy.

The faults are real: an OpenAI-compatible upstream (aiohttp, port 0) that
lists other models, a store path under a regular file (root writes through
chmod, not through a file), a Redis port nobody listens on, an API port a
test socket holds.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from contextlib import asynccontextmanager
from typing import AsyncIterator

import yaml
from aiohttp import web

from cli_helpers import DEADLINE, child_env

KEY = "sk-doctor-test-key-0123456789"


@asynccontextmanager
async def upstream(models: list[str], *, date: str | None = None) -> AsyncIterator[str]:
    """An OpenAI-compatible ``GET /v1/models`` listing ``models`` (with the key), on 127.0.0.1:0; ``date``: the
    ``Date`` header it sends instead of its own clock's."""
    async def list_models(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.json_response({"object": "list", "data": [{"id": m, "object": "model"} for m in models]},
                                 headers={"Date": date} if date else None)
    app = web.Application()
    app.router.add_get("/v1/models", list_models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port() -> int:
    """A port nothing listens on (bound, never listened, then closed)."""
    return free_port()


async def doctor(tmp_path, config: dict) -> tuple[int, list[str]]:
    base = {"store": {"path": str(tmp_path / "data" / "state.db")}, "media": {"directory": str(tmp_path / "media")},
            "api_server": {"port": free_port()}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**base, **config}))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "doctor", "--config", str(path), "--timeout", "5",
        env=child_env(tmp_path / "home"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), DEADLINE)
    text = (out + err).decode()
    assert KEY not in text and err == b"", text
    return process.returncode, out.decode().splitlines()


def failing(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("✗")]


def model(base_url: str, name: str = "llama-3-8b") -> dict:
    return {"model": {"base_url": base_url, "api_key": KEY, "name": name}}


async def test_a_healthy_config_passes_every_check(tmp_path):
    async with upstream(["llama-3-8b", "other"]) as url:
        code, lines = await doctor(tmp_path, model(url))
    assert code == 0, lines
    assert all(line.startswith("✓ ") for line in lines), lines
    text = "\n".join(lines)
    assert "✓ model: llama-3-8b is served by" in text
    assert "✓ clock: within 30 s of the upstream's" in text
    assert "✓ store:" in text and "is free" in text


async def test_the_demo_model_passes(tmp_path):
    code, lines = await doctor(tmp_path, {})
    assert code == 0, lines
    assert "✓ model: the built-in demo model (no upstream to check)" in lines


async def test_an_upstream_that_does_not_list_the_model(tmp_path):
    async with upstream(["llama-3-8b", "mistral-7b"]) as url:
        code, lines = await doctor(tmp_path, model(url, "gpt-4o"))
    assert code == 1
    assert failing(lines) == [f"✗ model.name: 'gpt-4o' is not among the models {url}/models lists (llama-3-8b, "
                              "mistral-7b): set model.name to one of them"], lines


async def test_a_wrong_upstream_key(tmp_path):
    async with upstream(["llama-3-8b"]) as url:
        config = model(url)
        config["model"]["api_key"] = "sk-wrong-key-0123456789"
        code, lines = await doctor(tmp_path, config)
    assert code == 1
    assert failing(lines) == [f"✗ model.api_key: {url}/models refused the key (HTTP 401): set model.api_key to a "
                              "valid key"], lines
    assert "sk-wrong-key-0123456789" not in "\n".join(lines)


async def test_a_store_that_cannot_be_written(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("a regular file where the store's directory should be\n")
    code, lines = await doctor(tmp_path, {})
    assert code == 1
    assert failing(lines) == [f"✗ store.path: {blocker}/state.db cannot be created: {blocker} is a file, not a "
                              "directory: move it aside, or choose another path"], lines


async def test_an_existing_store_that_is_read_only(tmp_path):
    """An existing database file that cannot be written (the probe write fails, whoever runs the test)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "state.db").mkdir()  # a directory where the database file should be
    code, lines = await doctor(tmp_path, {})
    assert code == 1
    assert failing(lines) == [f"✗ store.path: {data}/state.db: is a directory, not a database file"], lines


async def test_an_unreachable_redis(tmp_path):
    port = closed_port()
    code, lines = await doctor(tmp_path, {"coordination": {"url": f"redis://:hunter2secret@127.0.0.1:{port}/0"}})
    assert code == 1
    (line,) = failing(lines)
    assert line.startswith(f"✗ coordination.url: redis://***@127.0.0.1:{port}/0 does not answer (")
    assert line.endswith("): start Redis, or fix the address and password") and "hunter2secret" not in line


async def test_a_taken_api_port(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, lines = await doctor(tmp_path, {"api_server": {"port": port}})
    assert code == 1
    assert failing(lines) == [f"✗ api_server.port: 127.0.0.1:{port} is taken by another program: stop it, or set "
                              "api_server.port to a free port"], lines


async def test_a_config_that_does_not_parse(tmp_path):
    code, lines = await doctor(tmp_path, {"store": {"history_messages": "many"}})
    assert code == 1
    (line,) = failing(lines)
    assert line.startswith("✗ config: ") and "store.history_messages" in line


async def test_a_port_held_by_a_running_gateway_is_named_as_such(tmp_path):
    port = free_port()
    config = tmp_path / "gateway.yaml"
    config.write_text(yaml.safe_dump({"api_server": {"port": port}, "store": {"path": str(tmp_path / "g.db")}}))
    gateway = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config), env=child_env(tmp_path / "home"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        banner = await asyncio.wait_for(gateway.stdout.readline(), DEADLINE)
        assert banner, (await gateway.stderr.read()).decode()
        code, lines = await doctor(tmp_path, {"api_server": {"port": port}})
    finally:
        gateway.terminate()
        await asyncio.wait_for(gateway.communicate(), DEADLINE)
    assert code == 0, lines
    assert (f"✓ api_server: 127.0.0.1:{port} is in use by a running hermes-gateway (its /health answered); a second "
            "one there would fail to start") in lines


async def test_mcp_servers_are_started_listed_and_stopped(tmp_path):
    from pathlib import Path

    server = str(Path(__file__).parents[1] / "mcp" / "mcp_demo_server.py")
    code, lines = await doctor(tmp_path, {"mcp_servers": [
        {"name": "demo", "command": sys.executable, "args": [server]},
        {"name": "broken", "command": str(tmp_path / "no-such-program")},
    ]})
    assert code == 1
    assert any(line.startswith("✓ mcp_servers.demo: started, ") and "add" in line for line in lines), lines
    (line,) = failing(lines)
    assert line.startswith("✗ mcp_servers.broken: does not start: ") and "hermes-gateway tools" in line, lines


async def test_an_unreachable_postgresql_store(tmp_path):
    port = closed_port()
    code, lines = await doctor(tmp_path, {"store": {"url": f"postgresql://hermes:pg-secret-pw@127.0.0.1:{port}/bot"}})
    assert code == 1
    (line,) = failing(lines)
    assert line.startswith(f"✗ store.url: PostgreSQL at 127.0.0.1:{port}/bot: cannot connect: "), line
    assert "pg-secret-pw" not in "\n".join(lines)


async def test_a_healthy_postgresql_store(tmp_path):
    from hermes_gateway._core.store.postgres import SCHEMA_VERSION
    from hermes_gateway.testing.postgres import start_or_skip

    server = await asyncio.to_thread(start_or_skip)
    try:
        name = await asyncio.to_thread(server.create_database)
        code, lines = await doctor(tmp_path, {"store": {"url": server.url(name)}})
    finally:
        await asyncio.to_thread(server.cleanup)
    assert code == 0, lines
    assert any(line.startswith("✓ store: PostgreSQL at ") and line.endswith(f"reachable, writable, schema {SCHEMA_VERSION} (current)")
               for line in lines), lines


async def test_an_upstream_that_does_not_answer(tmp_path):
    port = closed_port()
    code, lines = await doctor(tmp_path, model(f"http://127.0.0.1:{port}/v1"))
    assert code == 1
    model_line, clock_line = failing(lines)
    assert model_line.startswith(f"✗ model.base_url: cannot reach http://127.0.0.1:{port}/v1/models (")
    assert model_line.endswith("); is the server running, and the address right?")
    assert clock_line == "✗ clock: not compared: the upstream did not answer"


async def test_a_clock_far_from_the_upstreams(tmp_path):
    import email.utils
    import time

    behind = email.utils.formatdate(time.time() - 600, usegmt=True)  # the upstream's clock: 10 minutes earlier
    async with upstream(["llama-3-8b"], date=behind) as url:
        code, lines = await doctor(tmp_path, model(url))
    assert code == 1
    (line,) = failing(lines)
    assert line.startswith("✗ clock: ") and " s ahead of the upstream's Date: sync it (timedatectl set-ntp true" in line
