"""Every call into a chat goes through the chat's budget and 429 handling (:mod:`hermes_gateway._core.delivery.calls`).

On a reference platform whose client has reactions and buttons (each call
meets the platform's budget and its 429 windows), through the whole gateway
in virtual time: a 429 on the approval question, on its update, on a
reaction, on typing and on a sent text is waited out — no call into the chat
before ``retry_after``, nothing lost — and the 👀 goes at once when the
chat's budget has a call, costing the first text at most one refill.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Callable

from calling_reference import CallingReference
from hermes_gateway import ChoiceAnswer, Incoming, RateBudget, Tool, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.outbound.send import send_to_chat
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import Fault, run_virtual

ASKER = "7"
REACTIONS = {"received": "👀", "done": "👍"}
PRIVATE = {"default": RateBudget(rate=1.0, burst=1)}   # a Telegram private chat
ROOMY = {"default": RateBudget(rate=50, burst=10)}
#: The demo model's canned thought is 28 tokens: at 14 a second its first visible word comes after 2 s.
THINKING_TPS = 14
_runs = itertools.count(1)


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


def gateway(ref: CallingReference, *extra: Any, tokens_per_second: float = 200, **sections: Any) -> Gateway:
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.2, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        **sections,
    }
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, *extra])
    return Gateway(parse_config(data, env={}), plugins)


def say(gw: Gateway, text: str, message_id: str = "m1", chat: str = "42") -> "asyncio.Future[Any]":
    return gw.receive(Incoming("reference", chat, text, sender_id=ASKER, update_id=message_id,
                               message_id=message_id, chat_kind="private", mentioned=True))


async def until(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Wait (virtual time) for ``condition``; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not condition():
        assert loop.time() < end, "the condition never came true"
        await asyncio.sleep(0.01)


def question_of(ref: CallingReference) -> str | None:
    return next(iter(ref.buttons), None)


def no_call_inside_a_429(ref: CallingReference, chat: str = "42") -> None:
    assert ref.chat(chat).violations == []


def test_a_429_on_the_approval_question_shows_the_buttons_after_the_wait():
    """The issue: the prompt took a 429 right after a streamed reply and the person got the typed commands."""
    ref, tool = CallingReference("reference", budgets=ROOMY), ShellTool()
    ref.rate_limit_next("offer_choice", 4.0)

    async def main():
        gw = gateway(ref, tool, tools={"approval": {"require": ["shell_*"]}})
        async with gw:
            reply = say(gw, 'tool: shell_run {"cmd": "ls"}')
            await until(lambda: question_of(ref) is not None)
            offers = ref.extra_calls("offer_choice")
            assert [c.outcome for c in offers] == ["rate_limited", "ok"]
            assert offers[1].at - offers[0].at >= 4.0
            assert ref.buttons[question_of(ref)] == ["Approve", "Deny"]
            assert not any("/allow" in line for line in ref.chat("42").screen)  # no typed-command fallback
            client = gw.clients.get("reference")
            await client.context.choose(ChoiceAnswer("reference", "42", ASKER, _choice_id(gw), "approve"))
            await asyncio.wait_for(reply, 60)
        assert tool.runs == ["ls"]
        no_call_inside_a_429(ref)
    run_virtual(main())


def _choice_id(gw: Gateway) -> str:
    """The open question's id (the desk of the gateway, as a button's payload names it)."""
    return next(iter(gw.approvals.desk._open))


def test_a_429_on_closing_the_question_is_waited_out_and_the_outcome_shown():
    ref, tool = CallingReference("reference", budgets=ROOMY), ShellTool()
    ref.rate_limit_next("close_choice", 3.0)

    async def main():
        gw = gateway(ref, tool, tools={"approval": {"require": ["shell_*"]}})
        async with gw:
            reply = say(gw, 'tool: shell_run {"cmd": "ls"}')
            await until(lambda: question_of(ref) is not None)
            asked = question_of(ref)
            client = gw.clients.get("reference")
            await client.context.choose(ChoiceAnswer("reference", "42", ASKER, _choice_id(gw), "approve"))
            await asyncio.wait_for(reply, 60)
            closes = ref.extra_calls("close_choice")
            assert [c.outcome for c in closes] == ["rate_limited", "ok"]
            assert closes[1].at - closes[0].at >= 3.0
        shown = next(m.text for m in ref.chat("42").messages if m.id == asked)
        assert shown == "✅ Approved: running shell_run."
        assert asked not in ref.buttons
        no_call_inside_a_429(ref)
    run_virtual(main())


def test_a_429_on_a_reaction_sets_it_after_the_wait():
    """A reaction that met a 429 used to be forgotten; now it is set once ``retry_after`` has passed."""
    ref = CallingReference("reference", budgets=ROOMY)
    ref.rate_limit_next("react", 5.0)

    async def main():
        gw = gateway(ref, reactions={"received": "👀"})
        async with gw:
            assert (await say(gw, "echo: hello there")).delivered
            await until(lambda: len(ref.reactions) == 1)
        reacts = ref.extra_calls("react")
        assert [c.outcome for c in reacts] == ["rate_limited", "ok"]
        assert reacts[1].at - reacts[0].at >= 5.0
        assert [(chat, mid, emoji) for chat, mid, emoji, _ in ref.reactions] == [("42", "m1", "👀")]
        assert ref.chat("42").screen == ["hello there"]
        no_call_inside_a_429(ref)
    run_virtual(main())


def test_a_429_on_typing_holds_every_call_into_the_chat_and_the_reply_is_whole():
    ref = CallingReference("reference", budgets=PRIVATE)
    ref.chat("42").fail_next(Fault.rate_limited(4.0, on="typing"))

    async def main():
        gw = gateway(ref, tokens_per_second=THINKING_TPS, streaming={"reference": {"enabled": False}})
        async with gw:
            report = await say(gw, "think: all of it")
            assert report.delivered
        calls = ref.chat("42").calls
        limited = next(c for c in calls if c.outcome == "rate_limited")
        assert limited.kind == "typing"
        assert all(c.at >= limited.at + 4.0 for c in calls if c is not limited and c.at > limited.at)
        assert ref.chat("42").screen == ["all of it"]
        no_call_inside_a_429(ref)
    run_virtual(main())


def test_a_429_on_a_sent_text_is_waited_out_and_it_arrives_once():
    ref = CallingReference("reference", budgets=PRIVATE)
    ref.chat("42").fail_next(Fault.rate_limited(3.0, on="send"))

    async def main():
        gw = gateway(ref)
        async with gw:
            report = await send_to_chat(gw.delivery, "reference", "42", "Sent by the operator.")
        assert report.delivered and report.rate_limited == 1
        sends = [c for c in ref.chat("42").calls if c.kind == "send"]
        assert [c.outcome for c in sends] == ["rate_limited", "ok"] and sends[1].at - sends[0].at >= 3.0
        assert ref.chat("42").screen == ["Sent by the operator."]
        no_call_inside_a_429(ref)
    run_virtual(main())


def _first_text_delay(reactions: dict[str, str] | None, prompt: str, tps: float) -> tuple[float, CallingReference]:
    """Seconds from the person's message to the reply's first text, with or without ``reactions``."""
    ref = CallingReference("reference", budgets=PRIVATE)
    out: dict[str, float] = {}

    async def main():
        sections = {"reactions": reactions} if reactions else {}
        gw = gateway(ref, tokens_per_second=tps, **sections)
        async with gw:
            start = asyncio.get_running_loop().time()
            assert (await say(gw, prompt, message_id=f"m{next(_runs)}")).delivered  # the store dedupes ids
            out["delay"] = ref.first_text_at("42") - start
            if reactions:
                await until(lambda: any(emoji == "👍" for *_, emoji, _ in ref.reactions))
        out["start"] = start
    run_virtual(main())
    ref.started_at = out["start"]  # type: ignore[attr-defined]
    return out["delay"], ref


def test_the_seen_reaction_goes_at_once_in_a_burst_one_chat_and_the_slow_first_text_is_not_later():
    """The issue: in a private Telegram chat the 👀 came after the first text even when the model needed 2 s."""
    without, _ = _first_text_delay(None, "think: one two three four five", THINKING_TPS)
    with_seen, ref = _first_text_delay(REACTIONS, "think: one two three four five", THINKING_TPS)
    seen = [at for _, _, emoji, at in ref.reactions if emoji == "👀"]
    assert seen and seen[0] - ref.started_at < 0.1  # at once, while the model thinks
    assert seen[0] < ref.first_text_at("42")
    assert without >= 2.0  # the model did need 2 s
    assert with_seen - without <= 0.5
    assert [emoji for *_, emoji, _ in ref.reactions] == ["👀", "👍"]
    no_call_inside_a_429(ref)
    assert ref.chat("42").throttled == 0


def test_a_first_text_within_the_refill_waits_at_most_that_refill():
    without, _ = _first_text_delay(None, "echo: quick answer here", 50)
    with_seen, ref = _first_text_delay(REACTIONS, "echo: quick answer here", 50)
    refill = 1.0 / PRIVATE["default"].rate
    assert with_seen <= max(without, refill) + 0.05
    assert [emoji for *_, emoji, _ in ref.reactions][0] == "👀"
    assert ref.chat("42").throttled == 0
    no_call_inside_a_429(ref)
