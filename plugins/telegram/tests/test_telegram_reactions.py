"""Status reactions (and typing) on the Telegram emulator: 👀 when the message is taken, 👍 when the reply is final, 429s waited out."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, config, eventually

# the repository's recording upstream (tests/agent, on the root pyproject's pythonpath)
scripted_upstream = pytest.importorskip("scripted_upstream", reason="run from the repository root")
ScriptedUpstream, chunk = scripted_upstream.ScriptedUpstream, scripted_upstream.chunk


def gateway_for(base_url, *, reactions, limits=None, model=None, **cfg):
    """The gateway on the emulator with ``reactions:`` set (and ``model:`` when given)."""
    data = {**config(base_url, **cfg), "reactions": reactions or {}}
    if model is not None:
        data["model"] = model
    return TestGateway(data, plugin,
                       limits={**FAST_LIMITS, **(limits or {})}, shutdown_grace=0.5)

REACTIONS = {"received": "👀", "done": "👍", "failed": "😢"}


#: Telegram's private chat: one call a second (with the plugin's margin), burst 1.
PRIVATE = {"budgets": {"default": RateBudget(rate=1 / 1.05, burst=1)}}
#: Seconds the scripted model thinks before its first word.
THINKS = 2.0
WORDS = [f"w{i} " for i in range(12)]


def thinking_model() -> list[tuple]:
    """A streamed answer whose first word comes after :data:`THINKS` s (marked ``first``), then a word every 50 ms."""
    steps: list[tuple] = [("data", chunk("", role="assistant")), ("sleep", THINKS), ("mark", "first")]
    for word in WORDS:
        steps += [("data", chunk(word)), ("sleep", 0.05)]
    return steps + [("data", chunk(finish="stop")), ("raw", b"data: [DONE]\n\n")]


async def first_text_after_first_token(api, chat_id: int, reactions) -> tuple[float, object]:
    """Seconds from the model's first token to the reply's first text in a private chat (with ``reactions``)."""
    async with ScriptedUpstream(default=thinking_model()) as upstream:
        model = {"base_url": upstream.url, "name": "thinker", "api_key": "k"}
        async with gateway_for(api.base_url, reactions=reactions, limits=PRIVATE, model=model):
            await api.push_message(chat_id, "hello")
            await eventually(lambda: api.screen(chat_id) == ["".join(WORDS).strip()], lambda: api.chat(chat_id).calls)
            if reactions:
                await eventually(lambda: api.chat(chat_id).reactions.get("1") == "👍",
                                 lambda: api.chat(chat_id).reaction_log)
        chat = api.chat(chat_id)
        first_text = min(c.at for c in chat.calls if c.method in ("sendMessage", "sendMessageDraft")
                         and c.outcome == "ok")
        return first_text - upstream.marks["first"], chat


async def test_in_a_private_chat_the_received_reaction_is_on_the_message_before_the_first_text(api):
    """The model needs 2 s: the 👀 says "seen" at once (Telegram's private budget has the call), before the
    first text, and the first text is no later than without reactions by more than 0.5 s.

    Measured from the model's first token (not wall time), so a loaded machine cannot make it pass or fail.
    """
    without, _ = await first_text_after_first_token(api, 5, None)
    with_seen, chat = await first_text_after_first_token(api, 6, REACTIONS)
    first_text = min(c.at for c in chat.calls if c.method in ("sendMessage", "sendMessageDraft")
                     and c.outcome == "ok")
    assert [emoji for _, emoji, _ in chat.reaction_log] == ["👀", "👍"]
    assert chat.reaction_log[0][2] < first_text
    assert with_seen - without <= 0.5, (with_seen, without)
    assert not chat.violations and not chat.rate_limited


async def test_in_a_group_the_received_reaction_comes_before_the_first_text(api):
    """A group's burst leaves a call for the first text: the 👀 shows while the model is still thinking."""
    async with gateway_for(api.base_url, tokens_per_second=5, reactions=REACTIONS,
                           limits={"budgets": {"default": RateBudget(rate=20 / 60, burst=3)}}):
        await api.push_message(-100, "echo: a b c d e f g h @hermes_test_bot", chat_type="supergroup")
        await eventually(lambda: api.chat(-100).reactions.get("1") == "👍", lambda: api.chat(-100).reaction_log,
                         timeout=30)
    chat = api.chat(-100)
    assert [emoji for _, emoji, _ in chat.reaction_log] == ["👀", "👍"]
    texts = [c.at for c in chat.calls if c.method in ("sendMessage", "editMessageText") and c.outcome == "ok"]
    assert chat.reaction_log[0][2] < texts[0] and chat.reaction_log[1][2] > texts[-1]
    assert api.screen(-100) == ["a b c d e f g h @hermes_test_bot"]
    assert not chat.violations and not chat.rate_limited


async def test_an_emoji_telegram_refuses_is_a_config_error_at_start(api):
    with pytest.raises(ConfigError, match=r"reactions\.done: an emoji telegram accepts as a reaction.*'✅'"):
        async with gateway_for(api.base_url, reactions={"done": "✅"}):
            pass


async def test_a_429_on_the_reaction_is_waited_out_and_the_reaction_set_after_it(api):
    """The 👀 meets "retry after 1": nothing goes into the chat for that second, then the 👀 is set (not lost)."""
    api.inject_rate_limit(7, 1, method="setMessageReaction")
    async with ScriptedUpstream(default=thinking_model()) as upstream:
        model = {"base_url": upstream.url, "name": "thinker", "api_key": "k"}
        async with gateway_for(api.base_url, reactions={"received": "👀"}, limits=PRIVATE, model=model):
            await api.push_message(7, "hello")
            await eventually(lambda: api.screen(7) == ["".join(WORDS).strip()], lambda: api.chat(7).calls)
            await eventually(lambda: api.chat(7).reactions.get("1") == "👀", lambda: api.chat(7).calls)
    chat = api.chat(7)
    reacts = [c for c in chat.calls if c.method == "setMessageReaction"]
    assert [c.outcome for c in reacts] == ["rate_limited", "ok"] and reacts[1].at - reacts[0].at >= 1.0
    assert not chat.violations


async def test_a_429_on_typing_holds_every_call_into_the_chat_and_the_reply_is_whole(api):
    api.inject_rate_limit(8, 2, method="sendChatAction")
    async with ScriptedUpstream(default=thinking_model()) as upstream:
        model = {"base_url": upstream.url, "name": "thinker", "api_key": "k"}
        async with gateway_for(api.base_url, reactions=None, limits=PRIVATE, model=model):
            await api.push_message(8, "hello")
            await eventually(lambda: api.screen(8) == ["".join(WORDS).strip()], lambda: api.chat(8).calls)
    chat = api.chat(8)
    limited = next(c for c in chat.calls if c.outcome == "rate_limited")
    assert limited.method == "sendChatAction"
    assert all(c.at >= limited.at + 2.0 for c in chat.calls if c.at > limited.at)
    assert not chat.violations
