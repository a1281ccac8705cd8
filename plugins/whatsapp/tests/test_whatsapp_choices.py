"""Approval of a risky tool on the WhatsApp emulator: interactive reply buttons, taps in the webhook.

WhatsApp cannot edit a sent message: the question stays, and its outcome is
a new message quoting it. Checked as the phone shows it, and how many times
the tool ran.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from hermes_whatsapp import plugin
from whatsapp_test_support import USER, config, eventually, webhook_url

OTHER = "4915199999999"
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


def approval_gateway(meta: Any, tool: ShellTool, **approval: Any) -> TestGateway:
    data = config(meta)
    data["tools"] = {"approval": {"require": ["shell_*"], **approval}}
    return TestGateway(data, plugin, tool, shutdown_grace=1.0)


async def question(meta: Any) -> Any:
    def find() -> Any:
        return next((m for m in meta.user(USER).messages if m.kind == "interactive"), None)
    await eventually(lambda: find() is not None, lambda: meta.screen(USER))
    return find()


async def test_a_tap_on_approve_runs_the_tool_once_a_second_tap_changes_nothing(meta):
    tool = ShellTool()
    async with approval_gateway(meta, tool) as gw:
        url = webhook_url(gw)
        assert await meta.deliver(url, meta.text_message(USER, CALL)) == 200
        asked = await question(meta)
        assert [t for _, t in asked.buttons] == ["Approve", "Deny"]
        assert "shell_run" in asked.text and '"cmd": "ls /tmp"' in asked.text
        assert await meta.deliver(url, meta.button_tap(USER, asked.wamid, "Approve")) == 200
        assert await meta.deliver(url, meta.button_tap(USER, asked.wamid, "Approve")) == 200  # tapped twice
        await eventually(lambda: any("a.txt b.txt" in t for t in meta.screen(USER)), lambda: meta.screen(USER))
        await eventually(lambda: "This question is no longer open." in meta.screen(USER), lambda: meta.screen(USER))
        screen = meta.screen(USER)
        assert screen.count("✅ Approved.") == 1
        outcome = next(m for m in meta.user(USER).messages if m.text == "✅ Approved: running shell_run.")
        assert outcome.quotes == asked.wamid
    assert tool.runs == ["ls /tmp"]


async def test_a_tap_on_deny_never_runs_it(meta):
    tool = ShellTool()
    async with approval_gateway(meta, tool) as gw:
        url = webhook_url(gw)
        assert await meta.deliver(url, meta.text_message(USER, CALL)) == 200
        asked = await question(meta)
        assert await meta.deliver(url, meta.button_tap(USER, asked.wamid, "Deny")) == 200
        await eventually(lambda: any("denied by the user" in t for t in meta.screen(USER)), lambda: meta.screen(USER))
        assert "❌ Denied: shell_run was not run." in meta.screen(USER)
    assert tool.runs == []


async def test_a_429_on_the_question_shows_the_buttons_after_the_wait(meta):
    """WhatsApp's "too many messages to this user" (131056) on the question: the core waits the plugin's wait and
    sends the buttons then, not the typed commands."""
    tool = ShellTool()
    async with approval_gateway(meta, tool) as gw:
        gw.client("whatsapp").pairs.first = 1.0  # the plugin's first wait after 131056 (it names none)
        meta.pair_penalty = 1.0                  # the emulator's "too soon" window after it
        meta.inject_pair_rate_limit(USER)        # the next send to the user: the question (no previews here)
        url = webhook_url(gw)
        assert await meta.deliver(url, meta.text_message(USER, CALL)) == 200
        asked = await question(meta)
        offers = [c for c in meta.calls if isinstance(c.body, dict) and c.body.get("type") == "interactive"]
        assert [c.status for c in offers] == [400, 200] and offers[1].at - offers[0].at >= 1.0
        assert not any("/allow" in t for t in meta.screen(USER))
        assert await meta.deliver(url, meta.button_tap(USER, asked.wamid, "Approve")) == 200
        await eventually(lambda: any("a.txt b.txt" in t for t in meta.screen(USER)), lambda: meta.screen(USER))
        assert not meta.user(USER).violations
    assert tool.runs == ["ls /tmp"]
