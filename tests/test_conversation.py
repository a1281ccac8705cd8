"""End to end inside the gateway: a person writes in a chat, the agent's reply streams back into it."""

from __future__ import annotations

import asyncio

from hermes_gateway import RateBudget, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.store import ConversationKey
from hermes_gateway.testing import ReferencePlatform

CURSOR = " ▌"
CONFIG = {
    "model": {"demo": {"tokens_per_second": 200}},
    "streaming": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3},
    "platforms": {"reference": {"enabled": True}},
}
LONG = "Every word of this reply travels from the model through the agent into the chat. " * 3


def gateway_with(ref: ReferencePlatform, **overrides) -> Gateway:
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools",), load_entry_points=False, extra=[ref])
    return Gateway(parse_config({**CONFIG, **overrides}, env={}), plugins)


async def test_a_message_in_a_chat_is_answered_by_a_streamed_reply():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with gateway_with(ref):
        report = await ref.say("42", f"echo: {LONG}")
    chat = ref.chat("42")
    assert report.delivered
    assert chat.said == [f"echo: {LONG}"]
    assert chat.screen == [LONG.strip()]
    previews = chat.messages[0].history[:-1]
    # the first send has no cursor: it appears once the store has recorded the message (a crash cannot leave it)
    assert len(previews) > 1 and not previews[0].endswith(CURSOR)
    assert all(p.endswith(CURSOR) for p in previews[1:]), "the reply was shown while it was generated"


async def test_think_blocks_never_reach_the_chat():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with gateway_with(ref):
        await ref.say("7", "think: only this is visible")
    message = ref.chat("7").messages[0]
    assert message.text == "only this is visible"
    assert not any("<think" in t or "</think" in t for t in message.history)


async def test_a_tool_call_shows_progress_then_the_answer():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with gateway_with(ref):
        await ref.say("9", 'tool: calculate {"expression": "6 * 7"}')
    message = ref.chat("9").messages[0]
    assert "42" in message.text and "🔧" not in message.text and CURSOR not in message.text
    assert any("🔧 calculate" in t for t in message.history)


async def test_with_streaming_off_the_reply_is_sent_once():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with gateway_with(ref, streaming={"enabled": False}):
        await ref.say("1", "echo: all at once")
    chat = ref.chat("1")
    assert chat.screen == ["all at once"]
    assert [c.kind for c in chat.calls] == ["typing", "send"]


async def test_each_chat_keeps_its_own_history():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with gateway_with(ref) as gateway:
        await asyncio.gather(ref.say("a", "echo: one"), ref.say("b", "echo: two"))
        await ref.say("a", "echo: three")
        history_a = await gateway.store.history(ConversationKey("reference", "a"))
    assert [m["content"] for m in history_a] == ["echo: one", "one", "echo: three", "three"]
    assert ref.chat("a").screen == ["one", "three"] and ref.chat("b").screen == ["two"]


async def test_a_tools_image_reaches_the_chat_after_the_text_and_the_history_keeps_the_stand_in(tmp_path):
    from hermes_gateway import MediaLimits

    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)}, media=MediaLimits())
    async with gateway_with(ref, media={"directory": str(tmp_path / "media")},
                            store={"path": str(tmp_path / "state.db")}) as gateway:
        report = await ref.say("q", 'tool: qr_code {"text": "hello"}')
        history = await gateway.store.history(ConversationKey("reference", "q"))
    chat = ref.chat("q")
    text = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
    assert chat.screen == [text, "[image: qr.png] hello"]
    assert chat.messages[1].media.data.startswith(b"\x89PNG") and chat.violations == []
    assert len(report.media) == 1 and report.media[0].message_id == chat.messages[1].id
    tool_message = next(m for m in history if m["role"] == "tool")
    assert tool_message["content"] == "A QR code for 5 characters of text.\n[image: qr.png attached]"


async def test_a_reply_that_never_stops_is_cut_with_a_note_and_remembered():
    """A model that never stops (issue 33): the chat gets the reply up to model.max_reply_chars and a short
    note that it was cut, and the conversation remembers what was said."""
    from scripted_upstream import ScriptedUpstream

    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50, burst=5)})
    async with ScriptedUpstream() as fake:
        fake.add(("forever", 0))
        model = {"base_url": fake.url, "name": "m", "max_reply_chars": 300}
        async with gateway_with(ref, model=model) as gateway:
            await ref.say("5", "count for ever")
            history = await gateway.store.history(ConversationKey("reference", "5", None))
    text = ref.chat("5").messages[-1].text
    body, _, note = text.rpartition("\n\n")
    assert body.startswith("tick0 tick1") and len(body) <= 300 and CURSOR not in text
    assert "cut" in note and "length limit" in note
    assert history[-1]["role"] == "assistant" and history[-1]["content"].startswith("tick0 tick1")


async def test_a_chats_reply_reads_the_upstream_in_batches_and_shows_every_word():
    """The chat shows the reply once per preview interval at most, so what the upstream sent together reaches the
    delivery as one delta (agent/read_batching.py); the screen holds every word, in order."""
    import json

    from hermes_gateway._core.agent import AIAgent
    from hermes_gateway._core.agent.read_batching import READ_BATCH
    from hermes_gateway._core.conversation import reply_in_chat
    from hermes_gateway._core.events import TextDelta

    from scripted_upstream import ScriptedUpstream, chunk

    words = ["one ", "two ", "three ", "four ", "five ", "six"]
    burst = b"".join(b"data: " + json.dumps(chunk(w)).encode() + b"\n\n" for w in words)
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=1, burst=1)})
    async with ScriptedUpstream() as upstream:
        upstream.add(("data", chunk("", role="assistant")), ("data", chunk("zero ")), ("data", chunk("and ")),
                     ("data", chunk("then ")), ("until", lambda: ref.chat("42").messages), ("raw", burst),
                     ("data", chunk(finish="stop")), ("raw", b"data: [DONE]\n\n"))
        overrides = {"model": {"base_url": upstream.url, "name": "test-model", "api_key": "k"}}
        async with gateway_with(ref, **overrides) as gateway:
            agent = AIAgent.from_config(gateway.config)
            deltas: list[str] = []
            batches: list[float] = []  # the turn's batch when each delta came: none before min_tokens (3) are in
            astream = agent.astream

            def recording(*args, **kwargs):
                async def events():
                    batch = READ_BATCH.get()
                    async for event in astream(*args, **kwargs):
                        if isinstance(event, TextDelta):
                            deltas.append(event.text)
                            batches.append(batch.seconds)
                        yield event
                return events()

            agent.astream = recording
            try:
                report, _ = await reply_in_chat(gateway.config, gateway.delivery, "reference", "42", "hi",
                                                agent=agent)
            finally:
                await agent.aclose()
    assert report.delivered
    assert ref.chat("42").screen == ["zero and then one two three four five six"]
    # one delta per chunk until min_tokens were in (the conversation notices it at the next delta), then one
    # delta for what was read together
    assert deltas == ["zero ", "and ", "then ", "one ", "".join(words[1:])]
    assert batches[:3] == [0.0, 0.0, 0.0] and batches[-1] == 0.25  # a quarter of Telegram's one call a second
