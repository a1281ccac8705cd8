"""A conversation survives a restart: the second turn's upstream request carries the first turn."""

from __future__ import annotations

from hermes_gateway import Incoming
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from inbound_helpers import reference
from scripted_upstream import ScriptedUpstream, text_stream


def gateway_on(ref, upstream_url: str, store_path) -> Gateway:
    config = parse_config({
        "model": {"base_url": upstream_url, "name": "test-model"},
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        "store": {"path": str(store_path)},
    }, env={})
    return Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[ref]))


async def test_the_second_turn_after_a_restart_carries_the_first(tmp_path):
    ref = reference()
    store_path = tmp_path / "state.db"
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("Nice to meet you, ", "Ada."))
        upstream.add(*text_stream("Your name is Ada."))
        async with gateway_on(ref, upstream.url, store_path) as gateway:
            await gateway.receive(Incoming("reference", "9", "Hi, I am Ada.", update_id="1"))
        async with gateway_on(ref, upstream.url, store_path) as gateway:  # a new process, the same file
            await gateway.receive(Incoming("reference", "9", "What is my name?", update_id="2"))
    assert ref.chat("9").screen == ["Nice to meet you, Ada.", "Your name is Ada."]
    second = upstream.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in second if m["role"] != "system"] == [
        ("user", "Hi, I am Ada."), ("assistant", "Nice to meet you, Ada."), ("user", "What is my name?")]


async def test_new_starts_a_conversation_without_the_old_turns(tmp_path):
    ref = reference()
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("Hello Ada."))
        upstream.add(*text_stream("I do not know your name yet."))
        async with gateway_on(ref, upstream.url, tmp_path / "state.db") as gateway:
            await gateway.receive(Incoming("reference", "9", "Hi, I am Ada.", update_id="1"))
            await gateway.receive(Incoming("reference", "9", "/new", update_id="2"))
            await gateway.receive(Incoming("reference", "9", "What is my name?", update_id="3"))
    assert ref.chat("9").screen == ["Hello Ada.", "✨ New conversation. What shall we talk about?",
                                    "I do not know your name yet."]
    second = upstream.requests[1].body["messages"]
    assert [(m["role"], m["content"]) for m in second if m["role"] != "system"] == [("user", "What is my name?")]


async def test_a_redelivery_after_a_restart_is_still_answered_once(tmp_path):
    ref = reference()
    async with ScriptedUpstream() as upstream:
        upstream.add(*text_stream("Once."))
        upstream.add(*text_stream("Twice?"))
        for _ in range(2):
            async with gateway_on(ref, upstream.url, tmp_path / "state.db") as gateway:
                await gateway.receive(Incoming("reference", "9", "Say it once.", update_id="upd-1"))
    assert ref.chat("9").screen == ["Once."] and len(upstream.requests) == 1
