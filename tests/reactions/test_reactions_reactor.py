"""Status reactions seen from the chat: when each appears, and that none costs a reply's first text."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hermes_gateway import ConfigError, RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway.testing import run_virtual
from inbound_helpers import People, make_gateway
from reacting_reference import ReactingReference

REACTIONS = {"received": "👀", "done": "👍", "failed": "😢"}


def reacting(burst: int = 1, **kw) -> ReactingReference:
    return ReactingReference("reference", budgets={"default": RateBudget(rate=1.0, burst=burst)}, **kw)


def test_received_then_done_on_the_persons_message():
    ref = reacting(burst=3)

    async def main():
        async with make_gateway(ref, reactions=REACTIONS) as gateway:
            report = await People(gateway).say("1", "echo: hello there")
            assert report.delivered
            await asyncio.sleep(3)
        marks = [(chat, mid, emoji) for chat, mid, emoji, _ in ref.reactions]
        assert marks == [("1", "u1", "👀"), ("1", "u1", "👍")]
        assert ref.chat("1").screen == ["hello there"]
    run_virtual(main())


def test_with_a_burst_of_one_the_seen_reaction_goes_at_once_and_the_first_text_waits_at_most_one_refill():
    """Burst 1 (a Telegram private chat): the 👀 takes the chat's one call at once (it says "seen" while the
    model thinks); a first text that comes sooner than the refill waits for it, no longer."""
    times = {}
    for reactions in (None, REACTIONS):
        ref = reacting(burst=1)

        async def main(ref=ref, reactions=reactions):
            loop = asyncio.get_running_loop()
            sections = {"reactions": reactions} if reactions else {}
            async with make_gateway(ref, tokens_per_second=20, **sections) as gateway:
                start = loop.time()
                report = await People(gateway).say("1", "echo: one two three four five",
                                                   update_id=f"r{bool(reactions)}")
                assert report.delivered
                await asyncio.sleep(4)
            times[bool(reactions)] = ref.first_text_at["1"] - start
            if reactions:
                received = [t - start for _, _, emoji, t in ref.reactions if emoji == "👀"]
                assert received == [0.0]
                assert [emoji for *_, emoji, _ in ref.reactions] == ["👀", "👍"]
        run_virtual(main())
    assert times[True] <= max(times[False], 1.0) + 0.01


def test_a_model_failure_is_marked_failed(caplog):
    ref = reacting(burst=3)

    async def main():
        down = {"base_url": "http://127.0.0.1:9/v1", "name": "nothing", "api_key": "k", "timeouts": {"connect": 1}}
        async with make_gateway(ref, reactions=REACTIONS, model=down) as gateway:
            report = await People(gateway).say("1", "hello?")
            assert report.model_error
            await asyncio.sleep(3)
        assert [emoji for _, _, emoji, _ in ref.reactions] == ["👀", "😢"]
        assert ref.chat("1").screen[0].startswith("⚠️ Sorry, I could not get an answer")
    run_virtual(main())


def test_a_failing_reaction_is_logged_once_and_the_reply_is_unharmed(caplog):
    ref = reacting(burst=3, fail_reactions=True)

    async def main():
        async with make_gateway(ref, reactions={"received": "👀"}) as gateway:
            assert (await People(gateway).say("1", "echo: still answered")).delivered
            await asyncio.sleep(2)
        assert ref.chat("1").screen == ["still answered"]
    with caplog.at_level(logging.WARNING):
        run_virtual(main())
    failures = [r for r in caplog.records if "reaction 👀" in r.getMessage()]
    assert len(failures) == 1 and "reactions are off" in failures[0].getMessage()


def test_reactions_are_off_by_default_and_a_null_key_is_no_reaction():
    ref = reacting(burst=3)

    async def main():
        async with make_gateway(ref) as gateway:
            assert (await People(gateway).say("1", "echo: quiet")).delivered
        async with make_gateway(ref, reactions={"received": None, "done": "👍"}) as gateway:
            assert (await People(gateway).say("2", "echo: only done", update_id="second")).delivered
            await asyncio.sleep(2)
        assert [(chat, emoji) for chat, _, emoji, _ in ref.reactions] == [("2", "👍")]
    run_virtual(main())


def test_reaction_config_errors_are_one_line():
    with pytest.raises(ConfigError, match=r"reactions\.done: one emoji or null"):
        parse_config({"reactions": {"done": "thumbs up"}}, env={})
    with pytest.raises(ConfigError, match=r"reactions\.seen: unknown key"):
        parse_config({"reactions": {"seen": "👀"}}, env={})


def test_several_messages_waiting_in_a_burst_one_chat_all_get_their_reactions():
    """Reactions claim calls ahead of previews one at a time: none waits for ever behind another."""
    ref = reacting(burst=1)

    async def main():
        async with make_gateway(ref, tokens_per_second=10, reactions=REACTIONS) as gateway:
            people = People(gateway)
            first = people.say("1", "echo: " + " ".join(f"a{i}" for i in range(30)))
            await asyncio.sleep(0.2)
            second = people.say("1", "echo: " + " ".join(f"b{i}" for i in range(30)))
            third = people.say("1", "echo: " + " ".join(f"c{i}" for i in range(30)))
            assert all(r.delivered for r in await asyncio.gather(first, second, third))
            await asyncio.sleep(10)
        done = {mid for _, mid, emoji, _ in ref.reactions if emoji == "👍"}
        assert done == {"u1", "u2", "u3"}
        assert all(emoji in ("👀", "👍") for *_, emoji, _ in ref.reactions)
    run_virtual(main())
