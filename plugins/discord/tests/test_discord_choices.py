"""Approval of a risky tool on the Discord emulator: buttons as message components, presses as interactions.

Checked as people see it: the question with Approve / Deny under it in a
server channel, the ephemeral answer only the presser sees, the question's
message after the answer, the reply — and how many times the tool ran.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from discord_test_support import FAST_LIMITS, eventually, gateway_config, plugin_for_tests
from hermes_discord.emulator import with_buttons

ASKER, OTHER = "2001", "3003"
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


def approval_gateway(api: Any, tool: ShellTool, timeout: float = 60) -> TestGateway:
    data = gateway_config(api)
    data["tools"] = {"approval": {"require": ["shell_*"], "timeout": timeout}}
    return TestGateway(data, plugin_for_tests(), tool, limits=FAST_LIMITS, shutdown_grace=0.5)


async def question(api: Any, channel: str) -> str:
    def find() -> str | None:
        return next((m.id for m in api.channel(channel).messages
                     if api.components.labels(m.id) == ["Approve", "Deny"]), None)
    await eventually(lambda: find() is not None, lambda: api.screen(channel))
    found = find()
    assert found is not None
    return found


def text_of(api: Any, channel: str, message_id: str) -> str:
    return next(m.text for m in api.channel(channel).messages if m.id == message_id)


async def reply_says(api: Any, channel: str, asked: str, words: str) -> None:
    await eventually(lambda: any(words in m.text for m in api.channel(channel).messages if m.id != asked),
                     lambda: api.screen(channel))


async def test_approve_runs_the_tool_once_others_and_double_clicks_change_nothing(api):
    tool = ShellTool()
    channel = api.general
    async with approval_gateway(api, tool):
        await api.wait_connected()
        await api.push_message(channel, CALL, mention=True, author_id=ASKER)
        asked = await question(api, channel)
        assert "shell_run" in text_of(api, channel, asked) and '"cmd": "ls /tmp"' in text_of(api, channel, asked)
        await reply_says(api, channel, asked, "waiting for approval: shell_run")  # the preview pauses visibly

        await api.press_button(channel, asked, "Approve", user_id=OTHER)
        await eventually(lambda: len(api.components.toasts()) == 1, lambda: api.components.answers)
        assert api.components.toasts() == [(OTHER, "⛔ Only the person who asked can answer this.")]
        assert tool.runs == [] and api.components.labels(asked) == ["Approve", "Deny"]

        await api.press_button(channel, asked, "Approve", user_id=ASKER)
        await api.press_button(channel, asked, "Approve", user_id=ASKER)  # a double click
        await reply_says(api, channel, asked, "a.txt b.txt")
        await eventually(lambda: len(api.components.toasts()) == 3, lambda: api.components.answers)
        assert tool.runs == ["ls /tmp"]
        assert [t for _, t in api.components.toasts()[1:]] == ["✅ Approved.", "This question is no longer open."]
        assert text_of(api, channel, asked) == "✅ Approved: running shell_run."
        assert api.components.labels(asked) == []
        assert not api.violations
    assert tool.runs == ["ls /tmp"]


async def test_deny_never_runs_the_tool(api):
    tool = ShellTool()
    channel = api.general
    async with approval_gateway(api, tool):
        await api.wait_connected()
        await api.push_message(channel, CALL, mention=True, author_id=ASKER)
        asked = await question(api, channel)
        await api.press_button(channel, asked, "Deny", user_id=ASKER)
        await reply_says(api, channel, asked, "denied by the user")
        assert text_of(api, channel, asked) == "❌ Denied: shell_run was not run."
    assert tool.runs == []


async def test_no_answer_in_time_is_a_deny(api):
    tool = ShellTool()
    channel = api.general
    async with approval_gateway(api, tool, timeout=1):
        await api.wait_connected()
        await api.push_message(channel, CALL, mention=True, author_id=ASKER)
        asked = await question(api, channel)
        await reply_says(api, channel, asked, "denied by the user")
        assert text_of(api, channel, asked) == "⌛ Not answered in time: shell_run was not run."
        assert api.components.labels(asked) == []
    assert tool.runs == []


async def test_in_a_thread_the_question_and_the_press_stay_in_the_thread(api):
    tool = ShellTool()
    thread = api.thread(api.general, "ops")
    async with approval_gateway(api, tool):
        await api.wait_connected()
        await api.push_message(thread, CALL, mention=True, author_id=ASKER)
        asked = await question(api, thread)
        await api.press_button(thread, asked, "Approve", user_id=ASKER)
        await reply_says(api, thread, asked, "a.txt b.txt")
        assert api.components.toasts() == [(ASKER, "✅ Approved.")]
        assert api.screen(api.general) == []
    assert tool.runs == ["ls /tmp"]


async def test_a_429_on_the_question_shows_the_buttons_after_the_wait(api):
    """A 429 on the message with components: the core waits ``retry_after`` (no call into the channel meanwhile)
    and then shows the buttons, instead of the typed commands."""
    tool = ShellTool()
    channel = api.general
    api.inject_rate_limit(channel, 1.5, kind="create", when=with_buttons)
    async with approval_gateway(api, tool):
        await api.wait_connected()
        await api.push_message(channel, CALL, mention=True, author_id=ASKER)
        asked = await question(api, channel)
        offers = [c for c in api.channel(channel).calls if c.method == "create" and with_buttons(c.params)]
        assert [c.outcome for c in offers] == ["rate_limited", "ok"]
        assert offers[1].at - offers[0].at >= 1.5
        assert not any("/allow" in text for text in api.screen(channel))
        await api.press_button(channel, asked, "Approve", user_id=ASKER)
        await reply_says(api, channel, asked, "a.txt b.txt")
        assert not api.violations
    assert tool.runs == ["ls /tmp"]
