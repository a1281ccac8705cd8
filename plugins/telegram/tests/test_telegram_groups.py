"""A group's room context and other bots on the Telegram emulator, checked at the upstream (issue 38).

The core does it (``groups:``); the plugin only hands over every message with
``mentioned`` and ``from_bot`` (``from.is_bot``). What is checked is what the
model was sent and what people see in the chat, across a gateway restart (the
context lives in the SQLite store).
"""

from __future__ import annotations

import logging
import re

import pytest

from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, eventually, section

scripted_upstream = pytest.importorskip("scripted_upstream", reason="run from the repository root")
ScriptedUpstream, text_stream = scripted_upstream.ScriptedUpstream, scripted_upstream.text_stream

ADMIN, ADA, BOB, OTHER_BOT = 1001, 2002, 2003, 5005
GROUP, ELSEWHERE = -1001, -1002
HEADER = "Recent messages in this group (context, not requests"


def groups_config(api_url: str, upstream_url: str, store: str, **groups: object) -> dict:
    return {
        "model": {"base_url": upstream_url, "name": "m"},
        "access": {"admins": [f"telegram:{ADMIN}"]},
        "store": {"path": store},
        "groups": groups,
        "platforms": {"telegram": {"enabled": True, **section(api_url, poll_timeout=5)}},
    }


async def _in_group(api, chat: int, text: str, user: int, name: str, **kw: object) -> None:
    await api.push_message(chat, text, chat_type="supergroup", user_id=user, first_name=name, **kw)


async def _answered(api, chat: int, count: int) -> list[str]:
    await eventually(lambda: len(api.screen(chat)) >= count, lambda: api.screen(chat))
    return api.screen(chat)


def _context(body: dict) -> str | None:
    """The room-context message of an upstream request (None when there is none), checked to come right
    before the person's message."""
    messages = body["messages"]
    found = [i for i, m in enumerate(messages) if m["role"] == "user" and HEADER in str(m["content"])]
    if not found:
        return None
    assert found == [len(messages) - 2], "one context message, right before the person's"
    return messages[found[0]]["content"]


async def test_a_groups_unaddressed_messages_reach_the_model_in_order_survive_a_restart_and_forget_clears_them(
        api, tmp_path):
    store = str(tmp_path / "state.db")
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = groups_config(api.base_url, up.url, store, context_messages=20, context_chars=4000)
        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
            await _in_group(api, GROUP, "shall we ship on Friday?", ADA, "Ada")
            await _in_group(api, ELSEWHERE, "the other group's secret", BOB, "Bob")
            await _in_group(api, GROUP, "only if the tests pass\nand the docs are done", BOB, "Bob")
            await _in_group(api, GROUP, "they do", ADA, "Ada")
            await _in_group(api, GROUP, "@hermes_test_bot what do you think?", ADA, "Ada")
            assert await _answered(api, GROUP, 1) == ["ok"]
        [first] = up.requests
        context = _context(first.body)
        assert context is not None
        lines = context.splitlines()
        when = r"^\[(\d{4}-\d\d-\d\d )?\d\d:\d\d\] "  # (with the date only past midnight UTC)
        assert all(re.match(when, line) for line in lines[1:] if not line.startswith("    "))
        assert [re.sub(when, "", line) for line in lines[1:]] == [
            "Ada: shall we ship on Friday?", "Bob: only if the tests pass", "    and the docs are done",
            "Ada: they do"]
        assert "secret" not in str(first.body["messages"]), "nothing of another group"
        assert first.body["messages"][-1] == {"role": "user", "content": "@hermes_test_bot what do you think?"}

        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):  # restarted: the store kept it
            await _in_group(api, GROUP, "@hermes_test_bot and the docs?", BOB, "Bob")
            await _answered(api, GROUP, 2)
            assert "Ada: they do" in (_context(up.requests[1].body) or "")
            assert "what do you think" not in (_context(up.requests[1].body) or ""), "addressed messages are history"
            await _in_group(api, GROUP, "/forget", BOB, "Bob")
            assert (await _answered(api, GROUP, 3))[-1].startswith("⛔ /forget is for admins only")
            await _in_group(api, GROUP, "/forget", ADMIN, "Admin")
            assert (await _answered(api, GROUP, 4))[-1] == "🧹 Forgot this chat's recent messages (3 kept as context)."
            await _in_group(api, GROUP, "@hermes_test_bot anything else?", ADA, "Ada")
            await _answered(api, GROUP, 5)
        assert _context(up.requests[2].body) is None, "/forget cleared the room's context"
        assert "shall we ship" not in str(up.requests[2].body["messages"][-2:])
        assert len(up.requests) == 3


async def test_another_bot_is_answered_only_when_it_mentions_this_one_and_at_most_max_bot_turns_times(
        api, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        data = groups_config(api.base_url, up.url, str(tmp_path / "state.db"), bots="ignore")
        data["overrides"] = [{"match": {"platform": "telegram", "chat": GROUP},
                              "groups": {"bots": "mentions", "max_bot_turns": 2}}]
        async with TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
            bot = {"user": OTHER_BOT, "name": "OtherBot", "is_bot": True}
            # groups.bots: ignore (this chat has no override): a bot's mention gets nothing
            await _in_group(api, ELSEWHERE, "@hermes_test_bot hello from a bot", **bot)
            await _in_group(api, ELSEWHERE, "@hermes_test_bot are you there?", ADA, "Ada")
            assert await _answered(api, ELSEWHERE, 1) == ["ok"]
            # mentions: a bot that does not mention this one gets nothing; one that does, twice, then silence
            await _in_group(api, GROUP, "talking to myself", **bot)
            await _in_group(api, GROUP, "@hermes_test_bot ping 1", **bot)
            assert await _answered(api, GROUP, 1) == ["ok"]
            await _in_group(api, GROUP, "@hermes_test_bot ping 2", **bot)
            assert await _answered(api, GROUP, 2) == ["ok", "ok"]
            await _in_group(api, GROUP, "@hermes_test_bot ping 3", **bot)
            await _in_group(api, GROUP, "@hermes_test_bot ping 4", **bot)
            await eventually(lambda: "bot-to-bot replies" in caplog.text, lambda: caplog.text)
            await _in_group(api, GROUP, "@hermes_test_bot are you there?", ADA, "Ada")  # people still are answered
            assert await _answered(api, GROUP, 3) == ["ok", "ok", "ok"]
    said = [r.body["messages"][-1]["content"] for r in up.requests]
    assert sorted(said) == sorted(["@hermes_test_bot are you there?", "@hermes_test_bot ping 1",
                                   "@hermes_test_bot ping 2", "@hermes_test_bot are you there?"])
    assert caplog.text.count("bot-to-bot replies") == 1, "one line, then silence"
