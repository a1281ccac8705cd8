"""Append-only platforms (Slack's chat.appendStream): every preview is a prefix of the message's final text."""

from __future__ import annotations

import asyncio

from delivery_helpers import feed_over, make_delivery, streaming, words
from hypothesis import HealthCheck, given, settings, strategies as st

import hermes_gateway
from hermes_gateway import MessageRef, Platform, RateBudget, make_plugins
from hermes_gateway._core.delivery import Delivery
from hermes_gateway._core.platform import appended
from hermes_gateway.testing import ReferencePlatform, reassemble, run_virtual

FAST = {"default": RateBudget(rate=50.0, burst=10)}
CODE = "".join(f"print('line {i}')\n" for i in range(12))
REPLY = f"Here is the code you asked for:\n\n```python\n{CODE}```\n\nIt prints twelve lines, one by one. " * 2


def appending(**kw) -> ReferencePlatform:
    return ReferencePlatform(append_only=True, budgets=FAST, **kw)


def test_previews_only_ever_append_and_the_screen_ends_exact():
    ref = appending(max_message_length=150)

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming())
        chunks = words(REPLY.strip())
        await feed_over(session, chunks[:20], 3)
        session.tool_started("search")          # no tool line: it could not be taken back
        await asyncio.sleep(2)
        session.tool_finished("search")
        await feed_over(session, chunks[20:], 10)
        return await session.finish()

    report = run_virtual(main())
    chat = ref.chat("c")
    assert report.delivered, report.error
    assert chat.violations == []  # the reference refuses a preview that does not extend the message
    assert chat.repairs == 0
    assert reassemble(chat.screen) == REPLY.strip()
    every_text = [t for m in chat.messages for t in m.history]
    assert not any("▌" in t or "🔧" in t for t in every_text)
    for message in chat.messages:  # each text a prefix of the next, the last one final
        assert all(b.startswith(a) for a, b in zip(message.history, message.history[1:]))
        assert len(message.history) >= 1
    assert sum(len(m.history) > 1 for m in chat.messages) >= 2, "previews did stream"
    assert all(h == "on_stream_end" for h in chat.last_hooks.values())


def test_a_preview_never_closes_a_code_fence_the_text_has_not_closed():
    ref = appending()

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming())
        await feed_over(session, words(f"Look:\n\n```python\n{CODE}```\n\nDone."), 8)
        return await session.finish()

    run_virtual(main())
    history = ref.chat("c").messages[0].history
    inside = [t for t in history[:-1] if "```python" in t]
    assert inside and all(t.count("```") == 1 for t in inside if not t.endswith("Done."))
    assert ref.chat("c").violations == []


def test_after_a_reset_on_stream_end_carries_the_whole_text_and_the_message_is_repaired():
    ref = appending()

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming())
        await feed_over(session, words("A first attempt that the upstream abandoned half way"), 3)
        session.reset()
        await feed_over(session, words("The retry's answer."), 1)
        return await session.finish("The retry's answer.")

    report = run_virtual(main())
    chat = ref.chat("c")
    assert report.delivered and chat.screen == ["The retry's answer."]
    assert chat.repairs == 1 and chat.violations == []
    assert chat.calls[-1].hook == "on_stream_end" and chat.calls[-1].text == "The retry's answer."


def test_post_processing_that_changes_the_text_is_a_repair_not_a_violation():
    ref = appending()
    raw = "Hello there, this is the answer"
    report = run_reply(ref, words(raw), final="Hello there — this is the answer.")
    assert report.delivered
    assert ref.chat("c").screen == ["Hello there — this is the answer."]
    assert ref.chat("c").repairs == 1 and ref.chat("c").violations == []


def run_reply(ref, chunks, *, final=None, seconds=4):
    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming())
        await feed_over(session, chunks, seconds)
        return await session.finish(final)
    return run_virtual(main())


# -- a plugin written against an API that can only append (or replace), with the documented helper -----------

class AppendApi:
    """A stand-in for a platform API with start/append/replace only (no "set the text")."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.appends = 0
        self.replaces = 0

    def start(self, text: str) -> str:
        self.messages.append(text)
        return str(len(self.messages) - 1)

    def append(self, message_id: str, more: str) -> None:
        self.appends += 1
        self.messages[int(message_id)] += more

    def replace(self, message_id: str, text: str) -> None:
        self.replaces += 1
        self.messages[int(message_id)] = text


def appending_plugin(api: AppendApi):
    class Plugin:
        __name__ = "appender"

        @hermes_gateway.hookimpl
        def register_platforms(self, register):
            register(Platform(name="appender", max_message_length=120, append_only=True, budgets=FAST))

        @hermes_gateway.hookimpl
        async def on_delta(self, stream, message, text):
            return self.write(stream, message, text)

        @hermes_gateway.hookimpl
        async def on_stream_end(self, stream, message, text):
            return self.write(stream, message, text)

        @staticmethod
        def write(stream, message, text):
            if message is None:
                ref = MessageRef(stream.chat_id, api.start(text))
            else:
                ref = message
                new = appended(stream.state.get(message.message_id, ""), text)
                if new is None:
                    api.replace(message.message_id, text)
                elif new:
                    api.append(message.message_id, new)
            stream.state[ref.message_id] = text
            return ref
    return Plugin()


def test_a_plugin_that_only_appends_shows_the_reply_exactly():
    api = AppendApi()
    delivery = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[appending_plugin(api)]))

    async def main():
        session = delivery.session("appender", "c", settings=streaming())
        await feed_over(session, words(REPLY.strip()), 10)
        return await session.finish()

    report = run_virtual(main())
    assert report.delivered
    assert reassemble(api.messages) == REPLY.strip()
    assert api.appends >= 3 and api.replaces == 0  # streamed by appending, never replaced


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(alphabet=st.sampled_from(list("ab cd\n.`😀")), min_size=1, max_size=400),
    cuts=st.lists(st.integers(min_value=1, max_value=15), min_size=1, max_size=30),
    limit=st.integers(min_value=40, max_value=200),
    gap=st.floats(min_value=0.01, max_value=1.0),
)
def test_any_stream_only_appends_on_an_append_only_platform(text, cuts, limit, gap):
    ref = appending(max_message_length=limit)
    chunks, i = [], 0
    while i < len(text):
        size = cuts[len(chunks) % len(cuts)]
        chunks.append(text[i:i + size])
        i += size

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming(min_tokens=1))
        for chunk in chunks:
            session.feed(chunk)
            await asyncio.sleep(gap)
        return await session.finish()

    report = run_virtual(main())
    chat = ref.chat("c")
    assert report.delivered, report.error
    assert chat.violations == []
    for message in chat.messages:
        previews = message.history[:-1]
        assert all(b.startswith(a) for a, b in zip(previews, previews[1:]))


def test_an_overflowing_append_only_reply_never_splits_a_word():
    reply = " ".join(f"word{i}" for i in range(300))
    for size in (3, 5, 7, 11):  # deltas that end inside words
        ref = appending(max_message_length=100)
        chunks = [reply[i:i + size] for i in range(0, len(reply), size)]
        report = run_reply(ref, chunks, seconds=30)
        screen = ref.chat("c").screen
        assert report.delivered and ref.chat("c").violations == []
        assert len(screen) > 10
        assert " ".join(screen).split() == reply.split(), f"a word was split with {size}-character deltas"
