"""Status reactions on the Telegram emulator: 👀 when the message is taken, 👍 when the reply is final."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from telegram_test_support import FAST_LIMITS, config, eventually


def gateway_for(base_url, *, reactions, limits=None, **cfg):
    """The gateway on the emulator with ``reactions:`` set."""
    return TestGateway({**config(base_url, **cfg), "reactions": reactions}, plugin,
                       limits={**FAST_LIMITS, **(limits or {})}, shutdown_grace=0.5)

REACTIONS = {"received": "👀", "done": "👍", "failed": "😢"}


async def test_received_then_done_and_the_first_text_comes_first_in_a_private_chat(api):
    """Telegram's private budget (one call a second, burst 1): the 👀 follows the first text, never takes its call.

    A reply over before the 👀 could go gets only the 👍 (a bot has one reaction per message on Telegram).
    """
    words = " ".join(f"w{i}" for i in range(30))  # about 3 s of words: the 👀 has time to show
    async with gateway_for(api.base_url, tokens_per_second=10, reactions=REACTIONS,
                           limits={"budgets": {"default": RateBudget(rate=1 / 1.05, burst=1)}}):
        await api.push_message(5, f"echo: {words}")
        await eventually(lambda: api.screen(5) == [words], lambda: api.chat(5).calls)
        await eventually(lambda: api.chat(5).reactions.get("1") == "👍", lambda: api.chat(5).reaction_log)
    chat = api.chat(5)
    assert [emoji for _, emoji, _ in chat.reaction_log] == ["👀", "👍"]
    first_text = min(c.at for c in chat.calls if c.method in ("sendMessage", "sendMessageDraft")
                     and c.outcome == "ok")
    assert chat.reaction_log[0][2] > first_text
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
