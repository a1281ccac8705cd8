"""Approval of a risky tool on the Telegram emulator: inline buttons, presses, toasts (issue 25).

What is checked is what people see: the question with Approve / Deny under
it, the toast a press gets, the question's message after the answer, the
reply — and how many times the tool really ran.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Tool, hookimpl
from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from hermes_telegram.emulator import with_buttons
from telegram_test_support import FAST_LIMITS, config, eventually

ASKER, OTHER = 1001, 2002
CALL = 'tool: shell_run {"cmd": "ls /tmp"}'


class ShellTool:
    """A tool that needs approval, counting its runs."""

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
    data = config(api.base_url)
    data["tools"] = {"approval": {"require": ["shell_*"], "timeout": timeout}}
    return TestGateway(data, plugin, tool, limits=FAST_LIMITS, shutdown_grace=0.5)


async def question(api: Any, chat: int) -> str:
    """The id of the bot's message carrying Approve / Deny, once it is there."""
    def find() -> str | None:
        for message in api.chat(chat).messages:
            if api.buttons.labels(api.chat(chat).chat_id, message.id) == ["Approve", "Deny"]:
                return message.id
        return None
    await eventually(lambda: find() is not None, lambda: api.screen(chat))
    found = find()
    assert found is not None
    return found


def text_of(api: Any, chat: int, message_id: str) -> str:
    return next(m.text for m in api.chat(chat).messages if m.id == message_id)


def reply_of(api: Any, chat: int, asked: str) -> Any:
    """The reply's message (the one that is not the question)."""
    return next(m for m in api.chat(chat).messages if m.id != asked)


async def reply_says(api: Any, chat: int, asked: str, words: str) -> None:
    await eventually(lambda: any(words in m.text for m in api.chat(chat).messages if m.id != asked),
                     lambda: api.screen(chat))


async def test_approve_runs_the_tool_once_and_the_reply_completes_others_and_double_clicks_change_nothing(api):
    tool = ShellTool()
    async with approval_gateway(api, tool):
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        shown = text_of(api, 42, asked)
        assert "shell_run" in shown and '"cmd": "ls /tmp"' in shown
        await reply_says(api, 42, asked, "waiting for approval: shell_run")  # the reply's preview pauses visibly
        assert tool.runs == []

        await api.press_button(42, asked, "Approve", user_id=OTHER)  # not the person who asked
        await eventually(lambda: len(api.buttons.toasts) == 1, lambda: api.buttons.toasts)
        assert api.buttons.toasts[0][1:] == (str(OTHER), "⛔ Only the person who asked can answer this.")
        assert tool.runs == [] and api.buttons.labels("42", asked) == ["Approve", "Deny"]

        await api.press_button(42, asked, "Approve", user_id=ASKER)
        await api.press_button(42, asked, "Approve", user_id=ASKER)  # a double click
        await eventually(lambda: len(api.buttons.toasts) == 3, lambda: api.buttons.toasts)
        await reply_says(api, 42, asked, "a.txt b.txt")
        assert tool.runs == ["ls /tmp"]
        reply = reply_of(api, 42, asked)  # the preview said it was waiting, then the reply went on
        assert reply.text == "The tool shell_run returned: listing of ls /tmp: a.txt b.txt"
        assert [t[2] for t in api.buttons.toasts[1:]] == ["✅ Approved.", "This question is no longer open."]
        assert text_of(api, 42, asked) == "✅ Approved: running shell_run."
        assert api.buttons.labels("42", asked) == []
    assert tool.runs == ["ls /tmp"]


async def test_deny_never_runs_the_tool_and_the_model_hears_denied_by_the_user(api):
    tool = ShellTool()
    async with approval_gateway(api, tool):
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        await api.press_button(42, asked, "Deny", user_id=ASKER)
        await reply_says(api, 42, asked, "denied by the user")
        assert text_of(api, 42, asked) == "❌ Denied: shell_run was not run."
    assert tool.runs == []


async def test_no_answer_in_time_is_a_deny(api):
    tool = ShellTool()
    async with approval_gateway(api, tool, timeout=1):
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        await reply_says(api, 42, asked, "denied by the user")
        assert text_of(api, 42, asked) == "⌛ Not answered in time: shell_run was not run."
        assert api.buttons.labels("42", asked) == []  # nothing left to press
    assert tool.runs == []


async def test_the_bot_asks_telegram_for_button_presses(api):
    async with approval_gateway(api, ShellTool()):
        await eventually(lambda: api.allowed_updates is not None, lambda: api.allowed_updates)
        assert {"message", "callback_query"} <= set(api.allowed_updates or ())


async def test_by_webhook_the_press_arrives_as_a_callback_query_too(api):
    from test_telegram_webhook import SECRET, free_port

    tool, port = ShellTool(), free_port()
    data = config(api.base_url)
    data["platforms"]["telegram"].update(mode="webhook", webhook_url=f"http://127.0.0.1:{port}/webhooks/telegram",
                                         webhook_secret=SECRET)
    data["api_server"] = {"enabled": False, "host": "127.0.0.1", "port": port}
    data["tools"] = {"approval": {"require": ["shell_*"]}}
    async with TestGateway(data, plugin, tool, limits=FAST_LIMITS, shutdown_grace=0.5):
        assert {"message", "callback_query"} <= set(api.webhook["allowed_updates"])
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        await api.press_button(42, asked, "Approve", user_id=ASKER)
        await reply_says(api, 42, asked, "a.txt b.txt")
        assert [t[2] for t in api.buttons.toasts] == ["✅ Approved."]
    assert tool.runs == ["ls /tmp"]


async def test_a_429_on_the_question_right_after_the_streamed_reply_shows_the_buttons_after_the_wait(api):
    """The issue: ``offer_choice`` took "flood control, retry after 4 s" after a streamed reply and the person got
    the typed commands. Now the question waits out the 429 like any call into the chat, then shows its buttons."""
    tool = ShellTool()
    api.inject_rate_limit(42, 2, method="sendMessage", when=with_buttons)
    async with approval_gateway(api, tool):
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        offers = [c for c in api.chat(42).calls if c.method == "sendMessage" and with_buttons(c.params)]
        assert [c.outcome for c in offers] == ["rate_limited", "ok"]
        assert offers[1].at - offers[0].at >= 2.0
        assert not any("/allow" in text for text in api.screen(42))  # no typed-command fallback
        await api.press_button(42, asked, "Approve", user_id=ASKER)
        await reply_says(api, 42, asked, "a.txt b.txt")
        await eventually(lambda: text_of(api, 42, asked) == "✅ Approved: running shell_run.", lambda: api.screen(42))
    assert tool.runs == ["ls /tmp"]
    assert not api.chat(42).violations


async def test_a_429_on_the_questions_update_is_waited_out_and_the_outcome_shown(api):
    tool = ShellTool()
    async with approval_gateway(api, tool):
        await api.push_message(42, CALL, user_id=ASKER)
        asked = await question(api, 42)
        api.inject_rate_limit(42, 2, method="editMessageText", when=lambda p: str(p.get("message_id")) == asked)
        await api.press_button(42, asked, "Deny", user_id=ASKER)
        await eventually(lambda: text_of(api, 42, asked) == "❌ Denied: shell_run was not run.", lambda: api.screen(42))
        updates = [c for c in api.chat(42).calls if c.method == "editMessageText"
                   and str(c.params.get("message_id")) == asked]
        assert [c.outcome for c in updates] == ["rate_limited", "ok"]
        assert updates[1].at - updates[0].at >= 2.0
        assert api.buttons.labels("42", asked) == []
    assert tool.runs == []
    assert not api.chat(42).violations
