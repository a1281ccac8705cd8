"""Approving a risky tool on Signal: Signal has no buttons (and one reaction per person per message, so no
Approve/Deny pair of reactions either), so the question comes with the commands to type, in the chat."""

from __future__ import annotations

import re
from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from hermes_signal import plugin
from signal_test_support import ALICE, BOB, GROUP, config, eventually

CALL = 'tool: shell_run {"cmd": "ls /tmp"}'


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


def approval_gateway(daemon: Any, tool: ShellTool) -> TestGateway:
    data = config(daemon)
    data["tools"] = {"approval": {"require": ["shell_*"], "timeout": 60}}
    return TestGateway(data, plugin, tool, limits={"edit_interval": 0}, shutdown_grace=0.5)


async def asked(daemon: Any, chat: str) -> str:
    def question_id() -> str | None:
        found = [re.search(r"/allow (\w+)", text) for text in daemon.screen(chat)]
        return next((m.group(1) for m in found if m), None)
    await eventually(lambda: question_id() is not None, lambda: daemon.screen(chat))
    return question_id() or ""


async def test_typing_allow_runs_the_tool_once_and_the_reply_completes(daemon):
    tool = ShellTool()
    async with approval_gateway(daemon, tool):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, CALL)
        question = await asked(daemon, ALICE)
        assert any("shell_run" in text and "/deny" in text for text in daemon.screen(ALICE))
        daemon.push_message(ALICE, f"/allow {question}")
        await eventually(lambda: any("a.txt b.txt" in t for t in daemon.screen(ALICE)), lambda: daemon.screen(ALICE))
        daemon.push_message(ALICE, f"/allow {question}")           # typed twice
        await eventually(lambda: len(daemon.screen(ALICE)) == 4, lambda: daemon.screen(ALICE))
    screen = daemon.screen(ALICE)    # the reply's first message and the question may come in either order
    assert sorted(screen) == sorted(["The tool shell_run returned: listing of ls /tmp: a.txt b.txt",
                                     next(t for t in screen if t.startswith("🔐")), "✅ Approved.",
                                     "This question is no longer open."]), screen
    assert tool.runs == ["ls /tmp"]
    assert daemon.violations == []


async def test_in_a_group_only_the_asker_may_allow_and_deny_never_runs_it(daemon):
    daemon.group(GROUP, [ALICE, BOB])
    chat = f"group:{GROUP}"
    tool = ShellTool()
    async with approval_gateway(daemon, tool):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, f"\ufffc {CALL}", group=GROUP, mentions=[daemon.mention_of_bot(0)])
        question = await asked(daemon, chat)
        daemon.push_message(BOB, f"\ufffc /allow {question}", group=GROUP, mentions=[daemon.mention_of_bot(0)])
        await eventually(lambda: "⛔ Only the person who asked can answer this." in daemon.screen(chat),
                         lambda: daemon.screen(chat))
        daemon.push_message(ALICE, f"\ufffc /deny {question}", group=GROUP, mentions=[daemon.mention_of_bot(0)])
        await eventually(lambda: "❌ Denied." in daemon.screen(chat), lambda: daemon.screen(chat))
        await eventually(lambda: "The tool shell_run returned: Error: denied by the user; the tool was not run."
                         in daemon.screen(chat), lambda: daemon.screen(chat))
    assert tool.runs == []
