"""A reply on Signal's screen: streamed by edits of one message within Signal's 10, paced without a rate limit.

Through the whole gateway (``TestGateway``, the demo model) and the daemon
emulator, which enforces the pace the plugin declares (answering -5 past it)
and refuses an 11th edit of a message: what a person's phone would show.
"""

from __future__ import annotations

from hermes_gateway import RateBudget
from hermes_gateway.testing import TestGateway, reassemble
from hermes_signal import BUDGETS, plugin
from hermes_signal.outbound import MAX_EDITS
from signal_test_support import ALICE, config, eventually

WORDS = " ".join(f"word{i}" for i in range(400))


async def test_a_400_word_reply_streams_by_edits_at_the_declared_pace_with_no_rate_limit_and_ends_complete(daemon):
    """The plugin's own budget (one call a second, bursts of 3) against a daemon answering -5 past exactly that
    (one call of slack: a call's transit on a loaded machine may bunch two arrivals, by up to a second)."""
    daemon.enforce(rate=BUDGETS["default"].rate, burst=BUDGETS["default"].burst + 1)
    data = config(daemon)
    # ~5 s of words: the first message (2,000 bytes) fills after ~3 s, time for previews at one call a second
    # once the budget's reserve for the end is kept (at 150 tokens/s it filled before a second edit was due)
    data["model"] = {"demo": {"tokens_per_second": 75}}
    data["streaming"] = {"signal": {"enabled": True, "edit_interval": 0.2, "min_tokens": 2}}
    async with TestGateway(data, plugin, limits={"edit_interval": 0.2}):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, f"echo: {WORDS}")
        await eventually(lambda: reassemble(daemon.screen(ALICE)) == WORDS, lambda: daemon.screen(ALICE))
    messages = daemon.bot_messages(ALICE)
    assert len(messages) == 2 and all(len(m.text.encode()) <= 2000 for m in messages), "2000 bytes a message"
    assert messages[0].edits >= 2, "the reply was streamed, not sent once"
    assert daemon.rate_limited == 0 and daemon.violations == []


async def test_previews_as_fast_as_allowed_keep_within_signals_10_edits_a_message(daemon):
    """Previews as often as a generous budget allows (edit_interval 0): each message still gets at most 10 edits
    (the emulator refuses an 11th, as Signal's apps drop it), and the screen ends with the whole reply."""
    fast = {"default": RateBudget(rate=25.0, burst=3)}
    data = config(daemon)
    data["model"] = {"demo": {"tokens_per_second": 150}}
    data["streaming"] = {"signal": {"enabled": True, "edit_interval": 0.05, "min_tokens": 2}}
    async with TestGateway(data, plugin, limits={"budgets": fast, "edit_interval": 0}):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, f"echo: {WORDS}")
        await eventually(lambda: reassemble(daemon.screen(ALICE)) == WORDS, lambda: daemon.screen(ALICE))
    messages = daemon.bot_messages(ALICE)
    assert max(m.edits for m in messages) <= MAX_EDITS and messages[0].edits >= 3, \
        [m.edits for m in messages]
    edits = [p for p in daemon.calls_of("send") if "editTimestamp" in p]
    assert len(edits) == sum(m.edits for m in messages)
    assert daemon.violations == []


async def test_edits_false_sends_each_message_once(daemon):
    data = config(daemon, edits=False)
    data["model"] = {"demo": {"tokens_per_second": 400}}
    async with TestGateway(data, plugin, limits={"edit_interval": 0}):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, f"echo: {WORDS}")
        await eventually(lambda: reassemble(daemon.screen(ALICE)) == WORDS, lambda: daemon.screen(ALICE))
    assert [m.edits for m in daemon.bot_messages(ALICE)] == [0, 0]
    assert not [p for p in daemon.calls_of("send") if "editTimestamp" in p]


async def test_a_429_mid_reply_is_waited_out_and_the_reply_is_whole(daemon):
    """signal-cli's -5 with retryAfterSeconds on the reply's third call (an edit): the core waits it out;
    nothing is lost or doubled."""
    data = config(daemon)
    data["model"] = {"demo": {"tokens_per_second": 100}}
    data["streaming"] = {"signal": {"enabled": True, "edit_interval": 0.1, "min_tokens": 2}}
    text = " ".join(WORDS.split()[:60])
    async with TestGateway(data, plugin, limits={"edit_interval": 0.1}):
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.inject_rate_limit(0.5, chat=ALICE, after=2)
        daemon.push_message(ALICE, "echo: " + text)
        await eventually(lambda: daemon.screen(ALICE) == [text], lambda: daemon.screen(ALICE))
    assert daemon.rate_limited == 1 and daemon.violations == []
    assert daemon.bot_messages(ALICE)[0].edits >= 1, "the reply was streamed by edits"
