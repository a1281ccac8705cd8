"""Approval of a risky tool on the Slack emulator: Block Kit buttons, over Socket Mode and the interactivity URL.

Checked as people see it: the question with Approve / Deny in the reply's
thread, the ephemeral line only the presser sees, the question's message
after the answer, the reply — and how many times the tool ran.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from hermes_slack import plugin
from hermes_slack.choices import INTERACTIVITY_PATH
from hermes_slack.emulator import with_buttons
from hermes_slack.receiving import EVENTS_PATH
from slack_test_support import LIMITS, config, eventually

ASKER, OTHER = "U0ALICE", "U0BOB"
CALL = 'tool: shell_run {"cmd": "ls /tmp"}'
DM = "D0APPROVE"


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


def approval_gateway(api: Any, tool: ShellTool, timeout: float = 60, mode: str = "socket") -> TestGateway:
    data = config(api, mode=mode)
    data["tools"] = {"approval": {"require": ["shell_*"], "timeout": timeout}}
    return TestGateway(data, plugin, tool, limits=LIMITS, shutdown_grace=0.5)


async def question(api: Any) -> str:
    def find() -> str | None:
        return next((m.ts for m in api.bot_messages(DM) if api.blocks.labels(m.ts) == ["Approve", "Deny"]), None)
    await eventually(lambda: find() is not None, lambda: [m.text for m in api.bot_messages(DM)])
    found = find()
    assert found is not None
    return found


def text_of(api: Any, ts: str) -> str:
    return next(m.text for m in api.bot_messages(DM) if m.ts == ts)


async def reply_says(api: Any, asked: str, words: str) -> None:
    await eventually(lambda: any(words in m.text for m in api.bot_messages(DM) if m.ts != asked),
                     lambda: [m.text for m in api.bot_messages(DM)])


async def approve_flow(api: Any, tool: ShellTool) -> None:
    await api.push_message(DM, CALL, user=ASKER, kind="im")
    asked = await question(api)
    assert "shell_run" in text_of(api, asked) and '"cmd": "ls /tmp"' in text_of(api, asked)
    # (no waiting line in a preview here: Slack's streams only append, and a line the reply later drops
    # cannot be shown on an append-only message; the question itself is what the person sees)

    await api.press_button(DM, asked, "Approve", user=OTHER)
    await eventually(lambda: len(api.blocks.ephemeral) == 1, lambda: api.blocks.ephemeral)
    assert api.blocks.ephemeral == [(DM, OTHER, "⛔ Only the person who asked can answer this.")]
    assert tool.runs == [] and api.blocks.labels(asked) == ["Approve", "Deny"]

    await api.press_button(DM, asked, "Approve", user=ASKER, times=2)  # a double click
    await reply_says(api, asked, "a.txt b.txt")
    await eventually(lambda: len(api.blocks.ephemeral) == 3, lambda: api.blocks.ephemeral)
    assert tool.runs == ["ls /tmp"]
    assert [t for _, _, t in api.blocks.ephemeral[1:]] == ["✅ Approved.", "This question is no longer open."]
    assert text_of(api, asked) == "✅ Approved: running shell_run."
    assert api.blocks.labels(asked) == []
    assert not api.violations


async def test_over_socket_mode_approve_runs_the_tool_once_others_and_double_clicks_change_nothing(api):
    tool = ShellTool()
    async with approval_gateway(api, tool):
        await approve_flow(api, tool)
    assert tool.runs == ["ls /tmp"]


async def test_over_the_interactivity_webhook_too(api):
    tool = ShellTool()
    async with approval_gateway(api, tool, mode="http") as gw:
        assert gw.url is not None
        api.events_url = gw.url + EVENTS_PATH
        api.interactivity_url = gw.url + INTERACTIVITY_PATH
        await approve_flow(api, tool)
    assert tool.runs == ["ls /tmp"]


async def test_deny_never_runs_the_tool(api):
    tool = ShellTool()
    async with approval_gateway(api, tool):
        await api.push_message(DM, CALL, user=ASKER, kind="im")
        asked = await question(api)
        await api.press_button(DM, asked, "Deny", user=ASKER)
        await reply_says(api, asked, "denied by the user")
        assert text_of(api, asked) == "❌ Denied: shell_run was not run."
    assert tool.runs == []


async def test_no_answer_in_time_is_a_deny(api):
    tool = ShellTool()
    async with approval_gateway(api, tool, timeout=1):
        await api.push_message(DM, CALL, user=ASKER, kind="im")
        asked = await question(api)
        await reply_says(api, asked, "denied by the user")
        assert text_of(api, asked) == "⌛ Not answered in time: shell_run was not run."
        assert api.blocks.labels(asked) == []
    assert tool.runs == []


async def test_a_429_on_the_question_shows_the_buttons_after_the_wait(api):
    """A 429 on the message with buttons: the core waits ``Retry-After`` and then shows them (not the commands)."""
    tool = ShellTool()
    api.inject_rate_limit(2, method="chat.postMessage", channel=DM, when=with_buttons)
    async with approval_gateway(api, tool):
        await api.push_message(DM, CALL, user=ASKER, kind="im")
        asked = await question(api)
        offers = [c for c in api.calls_to("chat.postMessage", DM) if with_buttons(c.params)]
        assert [c.status for c in offers] == [429, 200] and offers[1].at - offers[0].at >= 2.0
        assert not any("/allow" in m.text for m in api.bot_messages(DM))
        await api.press_button(DM, asked, "Approve", user=ASKER)
        await reply_says(api, asked, "a.txt b.txt")
        assert not api.violations
    assert tool.runs == ["ls /tmp"]
