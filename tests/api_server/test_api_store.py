"""previous_response_id on the conversation store: bounded, private to a key, and surviving a restart."""

from __future__ import annotations

import aiohttp
import openai
import pytest

from api_helpers import MODEL, gateway_config, running_gateway
from hermes_gateway._core.api_server.store import ResponseStore, owner_fingerprint
from hermes_gateway._core.store import MemoryStore, SQLiteStore


def echo_conversation(body: dict) -> str:
    """The scripted model answers with the conversation it was sent, so continuity shows in the reply."""
    return " | ".join(f"{m['role']}:{m['content']}" for m in body["messages"])


def config(upstream, path, *, store=None, api=None):
    return gateway_config({"store": {"path": str(path), **(store or {})}}, model=upstream.model_config(), api=api)


async def test_a_response_can_be_continued_after_the_gateway_restarts(upstream, tmp_path):
    upstream.reply = echo_conversation
    path = tmp_path / "state.db"
    async with running_gateway(config(upstream, path)) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        first = await client.responses.create(model=MODEL, input="my name is Ada")
    assert first.output_text == "user:my name is Ada"

    async with running_gateway(config(upstream, path)) as gw:  # a new process, as far as the store knows
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        async with client.responses.stream(model=MODEL, input="what is my name?",
                                           previous_response_id=first.id) as stream:
            second = await stream.get_final_response()
        assert (await client.responses.retrieve(first.id)).output_text == "user:my name is Ada"
        third = await client.responses.create(model=MODEL, input="and now?", previous_response_id=second.id)
    sent = upstream.requests[1]["messages"]
    assert sent == [{"role": "user", "content": "my name is Ada"},
                    {"role": "assistant", "content": "user:my name is Ada"},
                    {"role": "user", "content": "what is my name?"}]
    assert second.output_text == "user:my name is Ada | assistant:user:my name is Ada | user:what is my name?"
    assert third.output_text.endswith("user:what is my name? | assistant:" + second.output_text + " | user:and now?")

    async with running_gateway(config(upstream, path)) as gw:  # a deletion also survives a restart
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        await client.responses.delete(first.id)
    async with running_gateway(config(upstream, path)) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(first.id)
        with pytest.raises(openai.NotFoundError) as info:
            await client.responses.create(model=MODEL, input="x", previous_response_id=first.id)
        assert info.value.body["code"] == "previous_response_not_found"
        assert (await client.responses.retrieve(second.id)).output_text == second.output_text


async def test_a_response_stays_private_to_its_key_across_a_restart_even_if_the_keys_are_reordered(
        upstream, tmp_path):
    upstream.reply = echo_conversation
    path = tmp_path / "state.db"
    async with running_gateway(config(upstream, path, api={"api_keys": ["sk-alice", "sk-bob"]})) as gw:
        alice = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="sk-alice", max_retries=0)
        first = await alice.responses.create(model=MODEL, input="alice's secret")
    async with running_gateway(config(upstream, path, api={"api_keys": ["sk-bob", "sk-alice"]})) as gw:
        bob = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="sk-bob", max_retries=0)
        alice = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="sk-alice", max_retries=0)
        with pytest.raises(openai.NotFoundError):
            await bob.responses.retrieve(first.id)
        with pytest.raises(openai.NotFoundError):
            await bob.responses.create(model=MODEL, input="tell me", previous_response_id=first.id)
        follow = await alice.responses.create(model=MODEL, input="go on", previous_response_id=first.id)
        assert follow.output_text.startswith("user:alice's secret")
    assert b"sk-alice" not in path.read_bytes() and b"sk-bob" not in path.read_bytes()


async def test_a_chain_of_previous_response_ids_is_bounded_by_the_history_budget(upstream, tmp_path):
    upstream.reply = lambda body: f"reply {len(body['messages'])}"
    async with running_gateway(config(upstream, tmp_path / "s.db", store={"history_messages": 4})) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        previous = None
        for n in range(6):
            response = await client.responses.create(model=MODEL, input=f"turn {n}", previous_response_id=previous)
            previous = response.id
    sent = upstream.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["turn 3", "turn 4", "turn 5"]
    assert len(sent) == 5  # the 4 most recent messages (two turns), then the new one


async def test_a_store_that_fails_costs_continuation_not_replies(upstream, tmp_path):
    upstream.reply = echo_conversation
    broken = tmp_path / "broken.db"
    broken.mkdir()  # a directory where the database file should be
    async with running_gateway(config(upstream, tmp_path / "state.db")) as gw:
        gw.store = SQLiteStore(broken)  # the store fails from now on (as a disk that went away would)
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        reply = await client.responses.create(model=MODEL, input="hello")
        assert reply.output_text == "user:hello"  # the reply still arrives; the log says it was not stored
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{gw.url}/v1/responses/{reply.id}") as r:
                body = await r.json()
                assert r.status == 503 and r.headers["Retry-After"] == "5"
                assert body["error"]["code"] == "store_unavailable" and str(broken) not in body["error"]["message"]
        with pytest.raises(openai.InternalServerError) as info:
            await client.responses.create(model=MODEL, input="go on", previous_response_id=reply.id)
        assert info.value.status_code == 503
    assert broken.is_dir()


async def test_response_store_cuts_the_stored_conversation_at_a_user_message():
    backend = MemoryStore()
    store = ResponseStore(backend, history_messages=3, history_chars=10_000)
    conversation = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
                    {"role": "user", "content": "q2"}, {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "c", "content": "r"}, {"role": "assistant", "content": "a2"}]
    await store.put("resp_1", {"id": "resp_1"}, conversation, owner_fingerprint("k"))
    kept = (await store.get("resp_1", owner_fingerprint("k"))).conversation
    assert kept == ()  # the last three would start with a tool result: nothing rather than a fragment
    store = ResponseStore(backend, history_messages=4, history_chars=10_000)
    await store.put("resp_2", {"id": "resp_2"}, conversation, None)
    assert [m["content"] for m in (await store.get("resp_2", None)).conversation] == ["q2", None, "r", "a2"]


async def test_the_responses_share_the_conversation_database(upstream, tmp_path):
    upstream.reply = echo_conversation
    path = tmp_path / "state.db"
    async with running_gateway(config(upstream, path)) as gw:
        client = openai.AsyncOpenAI(base_url=f"{gw.url}/v1", api_key="x", max_retries=0)
        first = await client.responses.create(model=MODEL, input="stored")
    store = SQLiteStore(path)
    try:
        found = await store.get_response(first.id, None)
        assert found is not None and found.response["output"][0]["content"][0]["text"] == "user:stored"
    finally:
        await store.close()
