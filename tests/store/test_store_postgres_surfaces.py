"""``store.url: postgresql://...`` through the real surfaces: ``hermes-gateway history`` and ``run`` as processes,
and the API server's stored responses (``previous_response_id``, ``GET``/``DELETE /v1/responses/{id}``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import openai
import pytest

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import ConversationKey
from hermes_gateway._core.store.postgres import PostgresStore
from scripted_upstream import ScriptedUpstream, text_stream
from store_helpers import Clock, assistant, user

DEADLINE = 60
PASSWORD = "pg-Secret-9f8e7d6c"


def command(tmp_path, store_url: str, *args: str) -> subprocess.CompletedProcess:
    config = tmp_path / "config.yaml"
    config.write_text(f"store:\n  url: {store_url}\napi_server:\n  port: 0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path), HERMES_HOME=str(tmp_path / "data"), TZ="UTC", LANG="C.UTF-8")
    return subprocess.run([sys.executable, "-m", "hermes_gateway", *args, "--config", str(config)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=DEADLINE)


async def test_history_lists_and_shows_conversations_kept_on_postgresql(tmp_path, postgres_url):
    clock = Clock(1_700_000_000.0)  # 2023-11-14 22:13 UTC
    store = PostgresStore(postgres_url, clock=clock)
    await store.record_turn(ConversationKey("telegram", "-100123", "7"), [user("weather in Lisbon?"),
                                                                          assistant("Sunny.")])
    clock.advance(3600)
    await store.record_turn(ConversationKey("cli", "local"), [user("what time is it?"), assistant("23:13")])
    listed = await store.list_conversations()
    await store.close()

    shown = command(tmp_path, postgres_url, "history")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].split() == ["ID", "LAST", "ACTIVITY", "PLATFORM", "CHAT", "THREAD", "TURNS", "FIRST", "MESSAGE"]
    assert lines[1].split()[:7] == [str(listed[0].id), "2023-11-14", "23:13", "cli", "local", "-", "1"]
    assert lines[2].split()[:7] == [str(listed[1].id), "2023-11-14", "22:13", "telegram", "-100123", "7", "1"]

    one = command(tmp_path, postgres_url, "history", str(listed[1].id))
    assert one.returncode == 0, one.stderr
    assert "weather in Lisbon?" in one.stdout and "Sunny." in one.stdout
    missing = command(tmp_path, postgres_url, "history", "999")
    assert missing.returncode == 1 and "no conversation 999" in missing.stderr


def test_history_and_run_with_an_unreachable_database_say_so_in_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://hermes:{PASSWORD}@127.0.0.1:{port}/hermes"
    for args in (("history",), ("run",)):
        done = command(tmp_path, url, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert done.stderr.strip().splitlines() == [
            f"hermes-gateway: PostgreSQL at 127.0.0.1:{port}/hermes: cannot connect: Connection refused"], args
        assert PASSWORD not in done.stdout + done.stderr


async def test_api_responses_are_stored_on_postgresql_and_continue_after_a_restart(postgres_url):
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("Nice to meet you, Ada."))
        upstream.add(*text_stream("Your name is Ada."))
        config = parse_config({"model": {"base_url": upstream.url, "name": "test-model"},
                               "api_server": {"port": 0}, "store": {"url": postgres_url}}, env={})

        async with Gateway(config, make_plugins(load_entry_points=False)) as gateway:
            client = openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="x", max_retries=0)
            first = await client.responses.create(model="hermes-gateway", input="Hi, I am Ada.")
        assert first.output_text == "Nice to meet you, Ada."

        async with Gateway(config, make_plugins(load_entry_points=False)) as gateway:  # another replica, or later
            client = openai.AsyncOpenAI(base_url=f"{gateway.url}/v1", api_key="x", max_retries=0)
            assert (await client.responses.retrieve(first.id)).output_text == "Nice to meet you, Ada."
            second = await client.responses.create(model="hermes-gateway", input="What is my name?",
                                                   previous_response_id=first.id)
            await client.responses.delete(first.id)
            with pytest.raises(openai.NotFoundError):
                await client.responses.retrieve(first.id)
    assert second.output_text == "Your name is Ada."
    sent = [(m["role"], m["content"]) for m in upstream.requests[1].body["messages"] if m["role"] != "system"]
    assert sent == [("user", "Hi, I am Ada."), ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]
    check = PostgresStore(postgres_url)
    assert await check.get_response(second.id, None) is not None and await check.get_response(first.id, None) is None
    await check.close()


def test_a_database_not_in_utf8_is_refused_at_start_saying_how_to_create_one(tmp_path, postgres_server):
    """A database created SQL_ASCII (a plain C locale): psycopg would hand text back as bytes."""
    name = f"ascii_{os.getpid()}_{id(tmp_path) % 100000}"
    postgres_server.execute(f"CREATE DATABASE \"{name}\" ENCODING 'SQL_ASCII' TEMPLATE template0 "
                            "LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        url = postgres_server.url(name)
        for args in (("history",), ("run",)):
            done = command(tmp_path, url, *args)
            assert done.returncode == 1, (args, done.stdout, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1, (args, lines)
            assert "encoding is SQL_ASCII" in lines[0] and "UTF8" in lines[0], lines
            assert "createdb -E UTF8 -T template0" in lines[0], lines
        assert postgres_server.execute("SELECT to_regclass('hermes_schema_version')", name) == [(None,)]
    finally:
        postgres_server.drop_database(name)
