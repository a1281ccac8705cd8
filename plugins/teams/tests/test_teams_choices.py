"""Approval of a risky tool in Teams: an Adaptive Card with Approve / Deny, pressed by people on the emulator.

Checked as people see it: the card in the chat, the line Teams shows the
presser (the invoke's answer), the card's message after the answer (the
outcome, no buttons), the reply — and how many times the tool ran.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from hermes_teams import plugin
from hermes_teams.cards import CARD_TYPE
from hermes_teams.emulator import TeamsEmulator
from teams_test_support import FAST_STREAM, FAST_WINDOWS, LIMITS, config, connect, eventually

CALL = 'tool: shell_run {"cmd": "ls /tmp"}'
CHAT = "a:approve"


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


def approval_gateway(api: TeamsEmulator, tool: ShellTool) -> TestGateway:
    data = config(api)
    data["tools"] = {"approval": {"require": ["shell_*"], "timeout": 60}}
    return TestGateway(data, plugin, tool, limits=LIMITS, shutdown_grace=0.5)


async def card_message(api: TeamsEmulator) -> str:
    def find() -> str | None:
        return next((m.id for m in api.messages(CHAT)
                     if any(a.get("contentType") == CARD_TYPE for a in m.attachments)), None)
    await eventually(lambda: find() is not None, lambda: api.screen(CHAT))
    found = find()
    assert found is not None
    return found


def shown(api: TeamsEmulator, message_id: str) -> Any:
    return next(m for m in api.messages(CHAT) if m.id == message_id)


async def test_an_approval_is_answered_with_the_cards_button_and_the_tool_runs_once():
    tool = ShellTool()
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS) as api, \
            approval_gateway(api, tool) as gw:
        connect(api, gw.url)
        await api.send(CHAT, CALL)
        asked = await card_message(api)
        card = shown(api, asked).attachments[0]["content"]
        assert [a["title"] for a in card["actions"]] == ["Approve", "Deny"]
        assert "shell_run" in card["body"][0]["text"]

        status, answer = await api.press(CHAT, asked, 0, user="mallory")
        assert status == 200 and answer["value"] == "⛔ Only the person who asked can answer this."
        assert tool.runs == []

        status, answer = await api.press(CHAT, asked, 0)
        assert status == 200 and answer["value"] == "✅ Approved."
        await eventually(lambda: any("a.txt b.txt" in text for text in api.screen(CHAT)), lambda: api.screen(CHAT))
        assert (await api.press(CHAT, asked, 0))[1]["value"] == "This question is no longer open."
        assert tool.runs == ["ls /tmp"]
        await eventually(lambda: not shown(api, asked).attachments, lambda: shown(api, asked))
        assert shown(api, asked).text == "✅ Approved: running shell_run."
        assert api.violations == []


async def test_a_deny_from_a_classic_client_message_press_keeps_the_tool_from_running():
    tool = ShellTool()
    async with TeamsEmulator(stream_interval=FAST_STREAM, windows=FAST_WINDOWS) as api, \
            approval_gateway(api, tool) as gw:
        connect(api, gw.url)
        await api.send(CHAT, CALL)
        asked = await card_message(api)
        status, _ = await api.press(CHAT, asked, 1, invoke=False)  # a message activity whose value is the data
        assert status == 200
        await eventually(lambda: not shown(api, asked).attachments and "Denied" in shown(api, asked).text,
                         lambda: shown(api, asked))
        assert tool.runs == []
        assert api.violations == []
