"""A person edits a message they sent: what the chat shows (conversation.on_edit)."""

from __future__ import annotations

import asyncio

from hermes_gateway import Incoming
from hermes_gateway.testing import run_virtual
from inbound_helpers import CURSOR, make_gateway, reference


def say(gateway, text: str, message_id: str, *, edit: int = 0):
    """Message ``message_id`` as first sent (``edit=0``) or as its ``edit``-th edit (a fresh update id)."""
    update = message_id if not edit else f"{message_id}:edit:{edit}"
    return gateway.receive(Incoming("reference", "1", text, sender_id="p", update_id=update, message_id=message_id,
                                    edit_of=message_id if edit else None))


def test_an_edit_during_the_reply_supersedes_it_and_the_edited_text_is_answered():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=5) as gateway:
            first = say(gateway, "echo: alpha beta gamma delta epsilon zeta eta theta", "m1")
            await asyncio.sleep(1.0)
            edited = say(gateway, "echo: the fixed question", "m1", edit=1)
            assert (await first).interrupted
            assert (await edited).delivered
            history = await gateway.store.history(__import__("hermes_gateway._core.store", fromlist=["x"])
                                                  .ConversationKey("reference", "1", None))
        superseded, answer = ref.chat("1").screen
        shown, note = superseded.split("\n\n")
        assert "alpha beta gamma delta epsilon zeta eta theta".startswith(shown) and shown and CURSOR not in superseded
        assert note == "_✏️ Superseded by your edit._"
        assert answer == "the fixed question"
        assert [m["content"] for m in history if m["role"] == "user"] == ["echo: the fixed question"]
    run_virtual(main())


def test_an_edit_of_a_queued_message_replaces_it():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=5) as gateway:
            first = say(gateway, "echo: one two three", "m1")
            await asyncio.sleep(0.3)
            queued = say(gateway, "echo: typo", "m2")
            fixed = say(gateway, "echo: no typo", "m2", edit=1)
            assert (await first).delivered
            assert (await queued) is (await fixed) and (await fixed).delivered
        assert ref.chat("1").screen == ["one two three", "no typo"]
    run_virtual(main())


def test_an_edit_of_an_answered_message_is_ignored_and_on_edit_ignore_ignores_all():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=50) as gateway:
            assert (await say(gateway, "echo: done already", "m1")).delivered
            assert await say(gateway, "echo: too late", "m1", edit=1) is None
        async with make_gateway(ref, tokens_per_second=5, conversation={"on_edit": "ignore"}) as gateway:
            running = say(gateway, "echo: keep going please", "m9")
            await asyncio.sleep(0.5)
            assert await say(gateway, "echo: changed", "m9", edit=1) is None
            assert (await running).delivered and not (await running).interrupted
        assert ref.chat("1").screen == ["done already", "keep going please"]
    run_virtual(main())


def test_an_edit_that_keeps_the_text_changes_nothing():
    """Platforms report other changes (a link preview, a pin) as edits too: the reply goes on."""
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=5) as gateway:
            running = say(gateway, "echo: see https://example.org for more", "m1")
            await asyncio.sleep(0.5)
            assert await say(gateway, "echo: see https://example.org for more", "m1", edit=1) is None
            report = await running
            assert report.delivered and not report.interrupted
        assert ref.chat("1").screen == ["see https://example.org for more"]
    run_virtual(main())


def test_an_edit_after_the_whole_reply_is_shown_is_ignored_while_the_turn_is_still_being_recorded():
    """The person saw the whole reply, then fixed a typo: no second answer, even if the store is slow."""
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=50) as gateway:
            recording, release = asyncio.Event(), asyncio.Event()
            record_turn = gateway.store.record_turn

            async def slow_record_turn(*args, **kwargs):
                recording.set()
                await release.wait()
                return await record_turn(*args, **kwargs)
            gateway.store.record_turn = slow_record_turn
            first = say(gateway, "echo: done already", "m1")
            await recording.wait()
            assert ref.chat("1").screen == ["done already"]
            edited = say(gateway, "echo: done already, edited", "m1", edit=1)
            second = say(gateway, "echo: next one", "m2")
            await asyncio.sleep(0.2)
            release.set()
            assert (await first).delivered and not (await first).interrupted
            assert await edited is None
            assert (await second).delivered
        assert ref.chat("1").screen == ["done already", "next one"]
    run_virtual(main())
