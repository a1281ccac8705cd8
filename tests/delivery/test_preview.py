"""The draft of a reply: freed with the reply, without the cyclic garbage collector."""

from __future__ import annotations

import asyncio
import gc
import weakref

from delivery_helpers import make_delivery, streaming, words

from hermes_gateway.testing import ReferencePlatform, run_virtual


def test_a_finished_replys_draft_and_ledger_go_when_the_reply_does_without_a_cycle_collection():
    # The draft's reasoning filter held the draft (its retract callback, a bound method): a cycle, so each
    # reply's draft, ledger and crash-recovery journal (with its task and events) waited for a full collection
    # of the cyclic collector, which at the gateway's thresholds came every ~20 minutes of a 200-chat soak:
    # ~2,500 replies' objects (18 MB) piled up and the memory grew (bench/README.md, "3c. Soak").
    ref = ReferencePlatform()
    held: list[weakref.ref] = []

    async def main():
        delivery = make_delivery(ref)
        session = delivery.session("reference", "c1", settings=streaming(edit_interval=0.5))
        for word in words("a reply of a few words, streamed one by one. " * 3):
            session.feed(word)
            await asyncio.sleep(0.05)
        assert (await session.finish()).delivered
        held.extend([weakref.ref(session._draft), weakref.ref(session._ledger)])
        del session

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        run_virtual(main())
        alive = [r() for r in held if r() is not None]
    finally:
        if was_enabled:
            gc.enable()
    assert ref.chat("c1").screen == ["a reply of a few words, streamed one by one. " * 2
                                     + "a reply of a few words, streamed one by one."]
    assert alive == [], f"kept after the reply ended, until a cycle collection: {[type(o).__name__ for o in alive]}"
