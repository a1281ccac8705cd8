"""One bot for many people on the WhatsApp emulator too: per-chat persona and ``/model``, checked at the upstream.

The core does it all (issue 23); WhatsApp's webhook only hands messages over. Each user is their own chat.
"""

from __future__ import annotations

import pytest

from hermes_gateway.testing import TestGateway
from whatsapp_test_support import FAST, eventually, plugin, section, webhook_url

# the repository's recording upstream (tests/agent, on the root pyproject's pythonpath)
scripted_upstream = pytest.importorskip("scripted_upstream", reason="run from the repository root")
ScriptedUpstream, text_stream = scripted_upstream.ScriptedUpstream, scripted_upstream.text_stream

ADMIN, PERSON, OTHER = "4915100000001", "4915100000002", "4915100000003"


def operator_config(meta, upstream_url: str, store: str) -> dict:
    return {
        "model": {"base_url": upstream_url, "name": "small-model", "system_prompt": "You are helpful."},
        "models": {"big": {"base_url": upstream_url, "name": "big-model"}},
        "personas": {"pirate": {"system_prompt": "You are a pirate.", "description": "arr"}},
        "access": {"admins": [f"whatsapp:{ADMIN}"]},
        "store": {"path": store},
        "platforms": {"whatsapp": section(meta)},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": False},
    }


async def _say(meta, gateway, user: str, text: str, expect_messages: int) -> str:
    assert await meta.deliver(webhook_url(gateway), meta.text_message(user, text)) == 200
    await eventually(lambda: len(meta.screen(user)) >= expect_messages, lambda: meta.screen(user))
    return meta.screen(user)[-1]


def _system(body: dict) -> str | None:
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" else None


async def test_persona_and_model_per_chat_refused_for_non_admins_and_kept_across_a_restart(meta, tmp_path):
    store = str(tmp_path / "state.db")
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = operator_config(meta, up.url, store)
        async with TestGateway(data, plugin, limits={"budgets": FAST}, shutdown_grace=0.5) as gateway:
            assert await _say(meta, gateway, PERSON, "/persona pirate", 1) == "🎭 This chat now talks as pirate."
            assert await _say(meta, gateway, PERSON, "/model big", 2) == \
                "⛔ /model is for admins only. (/whoami shows your id.)"
            assert await _say(meta, gateway, PERSON, "hello", 3) == "ok"
            assert await _say(meta, gateway, OTHER, "hello", 1) == "ok"
            assert await _say(meta, gateway, ADMIN, "/model big", 1) == "🧠 This chat now uses big."
        assert [(r.body["model"], _system(r.body)) for r in up.requests] == [
            ("small-model", "You are a pirate."), ("small-model", "You are helpful.")]
        async with TestGateway(data, plugin, limits={"budgets": FAST}, shutdown_grace=0.5) as gateway:  # restarted
            assert await _say(meta, gateway, PERSON, "hello again", 4) == "ok"
            assert await _say(meta, gateway, ADMIN, "hello", 2) == "ok"
    assert [(r.body["model"], _system(r.body)) for r in up.requests[2:]] == [
        ("small-model", "You are a pirate."), ("big-model", "You are helpful.")]
