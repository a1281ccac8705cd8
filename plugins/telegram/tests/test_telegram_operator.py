"""One bot for many people, on the Telegram emulator: per-chat persona and ``/model``, checked at the upstream.

The core does it all (issue 23): the plugin only hands messages over. What
is checked is what a person sees in the chat and what the model was sent,
across a gateway restart (the choices live in the SQLite store).
"""

from __future__ import annotations

import pytest

from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, eventually, section

# the repository's recording upstream (tests/agent, on the root pyproject's pythonpath)
scripted_upstream = pytest.importorskip("scripted_upstream", reason="run from the repository root")
ScriptedUpstream, text_stream = scripted_upstream.ScriptedUpstream, scripted_upstream.text_stream

ADMIN, PERSON = 1001, 2002


def operator_config(api_url: str, upstream_url: str, store: str) -> dict:
    return {
        "model": {"base_url": upstream_url, "name": "small-model", "system_prompt": "You are helpful."},
        "models": {"big": {"base_url": upstream_url, "name": "big-model"}},
        "personas": {"pirate": {"system_prompt": "You are a pirate.", "description": "arr"}},
        "access": {"admins": [f"telegram:{ADMIN}"]},
        "store": {"path": store},
        "platforms": {"telegram": {"enabled": True, **section(api_url, poll_timeout=5)}},
    }


async def _say(api, chat: int, text: str, user: int, expect_messages: int) -> str:
    await api.push_message(chat, text, user_id=user)
    await eventually(lambda: len(api.screen(chat)) >= expect_messages, lambda: api.screen(chat))
    return api.screen(chat)[-1]


def _system(body: dict) -> str | None:
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" else None


async def test_persona_and_model_per_chat_refused_for_non_admins_and_kept_across_a_restart(api, tmp_path):
    store = str(tmp_path / "state.db")
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = operator_config(api.base_url, up.url, store)
        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
            assert await _say(api, 42, "/persona pirate", PERSON, 1) == "🎭 This chat now talks as pirate."
            assert await _say(api, 42, "/model big", PERSON, 2) == "⛔ /model is for admins only. (/whoami shows your id.)"
            assert await _say(api, 42, "hello", PERSON, 3) == "ok"
            assert await _say(api, 43, "hello", PERSON, 1) == "ok"
            assert await _say(api, 42, "/model big", ADMIN, 4) == "🧠 This chat now uses big."
        assert [(r.body["model"], _system(r.body)) for r in up.requests] == [
            ("small-model", "You are a pirate."), ("small-model", "You are helpful.")]
        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):  # restarted
            assert await _say(api, 42, "hello again", PERSON, 5) == "ok"
            assert await _say(api, 43, "hello again", PERSON, 2) == "ok"
    assert [(r.body["model"], _system(r.body)) for r in up.requests[2:]] == [
        ("big-model", "You are a pirate."), ("small-model", "You are helpful.")]


async def test_an_override_for_one_group_uses_its_model_and_tools_while_a_private_chat_does_not(api, tmp_path):
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = operator_config(api.base_url, up.url, str(tmp_path / "state.db"))
        data["overrides"] = [{"match": {"platform": "telegram", "chat": -1001}, "model": "big",
                              "tools": {"allow": ["qr_code"]}}]
        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
            await api.push_message(-1001, "@hermes_test_bot hello", chat_type="supergroup", user_id=PERSON)
            await eventually(lambda: api.screen(-1001) == ["ok"], lambda: api.screen(-1001))
            assert await _say(api, 42, "hello", PERSON, 1) == "ok"
    group, private = (r.body for r in up.requests)
    assert group["model"] == "big-model" and [t["function"]["name"] for t in group["tools"]] == ["qr_code"]
    assert private["model"] == "small-model" and len(private["tools"]) > 1
