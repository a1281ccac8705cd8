"""Approval of a risky tool by interactive message buttons, and the action route under hostile input.

Checked as people see it on the emulator: the question with Approve / Deny
in the reply's thread, the line only the presser sees, the question's post
after the answer, the reply — and how many times the tool ran. A click
nobody made through Mattermost (a forged context, a token for another
channel, junk) is refused with a 4xx and runs nothing.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp

from hermes_gateway import Tool, hookimpl
from hermes_mattermost.actions import path_of, token_of
from hermes_mattermost.emulator import ALICE_ID, BOB_ID
from mattermost_test_support import eventually, gateway

CALL = 'tool: shell_run {"cmd": "ls /tmp"}'
DM = "dmapprove00000000000000000"


class ShellTool:
    def __init__(self) -> None:
        self.runs: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool("shell_run", "Run a shell command", self.run,
                      {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}))

    def run(self, cmd: str) -> str:
        self.runs.append(cmd)
        return f"listing of {cmd}: a.txt b.txt"


def approval_gateway(mm: Any, tool: ShellTool) -> Any:
    return gateway(mm, extra=(tool,), actions_url="http://gateway.internal:8080",
                   data={"tools": {"approval": {"require": ["shell_*"], "timeout": 60}}})


async def question(mm: Any) -> str:
    def find() -> str | None:
        return next((p.id for p in mm.bot_posts(DM) if mm.buttons(p.id) == ["Approve", "Deny"]), None)
    await eventually(lambda: find() is not None, lambda: mm.screen(DM))
    return str(find())


async def test_a_click_approves_others_and_second_clicks_change_nothing(mm):
    mm.channel(DM, "D")
    tool = ShellTool()
    async with approval_gateway(mm, tool) as gw:
        mm.actions_base = gw.url
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        await mm.post_as(ALICE_ID, DM, CALL)
        asked = await question(mm)
        assert "shell_run" in mm.posts[asked].message
        wire = mm.posts[asked].wire(mm.files)  # what people's apps get: no integration, so no token
        assert "integration" not in json.dumps(wire) and "token" not in json.dumps(wire)

        await mm.click(asked, "Approve", BOB_ID)
        assert mm.action_answers == [200], (mm.action_answers, mm.last_action_answer)
        assert mm.ephemeral == [(DM, BOB_ID, "⛔ Only the person who asked can answer this.")]
        assert tool.runs == []
        await asyncio.gather(mm.click(asked, "Approve", ALICE_ID), mm.click(asked, "Approve", ALICE_ID))  # a double click
        await eventually(lambda: any("a.txt b.txt" in t for t in mm.screen(DM)), lambda: mm.screen(DM))
        assert sorted(t for _, _, t in mm.ephemeral[1:]) == ["This question is no longer open.", "✅ Approved."]
        assert mm.posts[asked].message == "✅ Approved: running shell_run."
        assert mm.buttons(asked) == []
    assert tool.runs == ["ls /tmp"]
    assert mm.count(429) == 0 and not mm.violations


async def test_a_forged_or_junk_request_on_the_action_route_is_refused_and_runs_nothing(mm):
    mm.channel(DM, "D")
    tool = ShellTool()
    async with approval_gateway(mm, tool) as gw:
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        await mm.post_as(ALICE_ID, DM, CALL)
        asked = await question(mm)
        context = mm.posts[asked].props["attachments"][0]["actions"][0]["integration"]["context"]
        url = gw.url + path_of("mattermost")
        base = {"user_id": ALICE_ID, "channel_id": DM, "post_id": asked}
        other_key_token = token_of(b"a key that is not the bot's", DM, context["payload"])
        cases: list[tuple[Any, int]] = [
            ({**base, "context": {"payload": context["payload"], "token": "0" * 64}}, 403),      # forged
            ({**base, "context": {"payload": context["payload"], "token": other_key_token}}, 403),
            ({**base, "channel_id": "elsewhere00000000000000000", "context": context}, 403),  # replayed elsewhere
            ({**base, "context": {"payload": context["payload"]}}, 403),
            ({**base, "context": "a string"}, 400),
            ({"context": context}, 400),
            ([1, 2, 3], 400),
            ("null", 400),
            (b"\xff\xfe not json", 400),
            (b"{" * 100_000, 413),
        ]
        async with aiohttp.ClientSession() as session:
            for body, status in cases:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                async with session.post(url, data=data, headers={"Content-Type": "application/json"}) as answer:
                    assert answer.status == status, (body if not isinstance(body, bytes) else body[:20], answer.status)
                    assert "ephemeral_text" not in await answer.text()
        assert tool.runs == [] and mm.buttons(asked) == ["Approve", "Deny"]


async def test_without_actions_url_the_question_is_typed_and_answered_by_a_typed_command(mm):
    """No buttons without a URL the server can reach: the core asks in text, and ``!allow ID`` (this platform's
    command prefix: Mattermost's apps take ``/`` for their own slash commands) answers it."""
    mm.channel(DM, "D")
    tool = ShellTool()
    async with gateway(mm, extra=(tool,), data={"tools": {"approval": {"require": ["shell_*"], "timeout": 60}}}):
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        await mm.post_as(ALICE_ID, DM, CALL)
        await eventually(lambda: any("allow " in t for t in mm.screen(DM)), lambda: mm.screen(DM))
        asked = next(t for t in mm.screen(DM) if "allow " in t)
        question_id = re.search(r"allow (\w+)", asked)
        assert question_id is not None and all(mm.buttons(p.id) == [] for p in mm.bot_posts(DM)), asked
        await mm.post_as(ALICE_ID, DM, f"!allow {question_id.group(1)}")
        await eventually(lambda: any("a.txt b.txt" in t for t in mm.screen(DM)), lambda: mm.screen(DM))
    assert tool.runs == ["ls /tmp"]
