"""Approval in a chat whose platform has no buttons: the question as text, ``/allow ID`` / ``/deny ID`` typed.

On the reference platform (no ``offer_choice``), with the demo model calling
a tool that needs approval; what is checked is the chat's screen and how
often the tool ran. ``/allow`` runs beside the chat's lane: the reply it
answers is waiting in that lane.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

from hermes_gateway import Incoming, RateBudget, Tool, hookimpl
from hermes_gateway.testing import ReferencePlatform, TestGateway

ASKER, OTHER, ADMIN = "7", "8", "9"
_ids = itertools.count(1)


class ShellTool:
    def __init__(self) -> None:
        self.runs: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool("shell_run", "Run a shell command", self.run,
                      {"type": "object", "properties": {"cmd": {"type": "string"}}}))

    def run(self, cmd: str = "") -> str:
        self.runs.append(cmd)
        return f"ran {cmd}"


def gateway(ref: ReferencePlatform, tool: ShellTool, **approval: Any) -> TestGateway:
    return TestGateway({"model": {"demo": {"tokens_per_second": 500}},
                        "platforms": {"reference": {"enabled": True}},
                        "access": {"admins": [f"reference:{ADMIN}"]},
                        "tools": {"approval": {"require": ["shell_*"], **approval}}}, ref, tool)


def send(gw: TestGateway, text: str, user: str) -> "asyncio.Future[Any]":
    n = next(_ids)
    return gw.receive(Incoming("reference", "42", text, sender_id=user, update_id=f"u{n}", message_id=f"m{n}",
                               chat_kind="private", mentioned=True))


async def question_id(ref: ReferencePlatform) -> str:
    for _ in range(400):
        for line in ref.chat("42").screen:
            found = re.search(r"[/!]allow (\w+)", line)
            if found:
                return found.group(1)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no question on screen: {ref.chat('42').screen}")


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=200, burst=50)})


async def test_allow_typed_by_the_asker_runs_the_tool_once_others_and_repeats_change_nothing():
    ref, tool = reference(), ShellTool()
    async with gateway(ref, tool) as gw:
        reply = send(gw, 'tool: shell_run {"cmd": "ls"}', ASKER)
        qid = await question_id(ref)
        assert any("shell_run" in line and '"cmd": "ls"' in line for line in ref.chat("42").screen)
        await send(gw, f"/allow {qid}", OTHER)
        assert ref.chat("42").screen[-1] == "⛔ Only the person who asked can answer this."
        assert tool.runs == []
        await send(gw, f"/allow {qid}", ASKER)
        await send(gw, f"/allow {qid}", ASKER)
        await asyncio.wait_for(reply, 20)
        assert tool.runs == ["ls"]
        screen = ref.chat("42").screen
        assert "✅ Approved." in screen and "This question is no longer open." in screen
        assert any("ran ls" in line for line in screen)


async def test_deny_typed_never_runs_it_and_with_who_admin_only_an_admin_may_answer():
    ref, tool = reference(), ShellTool()
    async with gateway(ref, tool, who="admin") as gw:
        reply = send(gw, 'tool: shell_run {"cmd": "rm"}', ASKER)
        qid = await question_id(ref)
        await send(gw, f"/deny {qid}", ASKER)
        assert ref.chat("42").screen[-1] == "⛔ Only an admin can answer this."
        await send(gw, f"/deny {qid}", ADMIN)
        await asyncio.wait_for(reply, 20)
        assert any("denied by the user" in line for line in ref.chat("42").screen)
    assert tool.runs == []


async def test_stop_while_waiting_ends_the_question_and_the_tool_never_runs():
    ref, tool = reference(), ShellTool()
    async with gateway(ref, tool) as gw:
        reply = send(gw, 'tool: shell_run {"cmd": "rm"}', ASKER)
        qid = await question_id(ref)
        await send(gw, "/stop", ASKER)
        await asyncio.wait_for(reply, 20)
        await send(gw, f"/allow {qid}", ASKER)  # too late: the question went with the reply
        assert ref.chat("42").screen[-1] == "This question is no longer open."
    assert tool.runs == []


async def test_on_a_platform_whose_commands_start_with_a_bang_the_question_names_bang_allow():
    from dataclasses import replace

    ref, tool = reference(), ShellTool()
    ref.platform = replace(ref.platform, command_prefix="!")  # Matrix, Mattermost: the apps take "/" themselves
    async with gateway(ref, tool) as gw:
        reply = send(gw, 'tool: shell_run {"cmd": "ls"}', ASKER)
        qid = await question_id(ref)
        hint = next(line for line in ref.chat("42").screen if qid in line)
        assert f"Answer !allow {qid} or !deny {qid}" in hint and "/allow" not in hint
        await send(gw, f"!allow {qid}", ASKER)
        await asyncio.wait_for(reply, 20)
    assert tool.runs == ["ls"]
