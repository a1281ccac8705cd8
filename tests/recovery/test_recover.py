"""Finishing replies a crash left (issue 26 item 3): once, on one replica or two, with a note or one retry.

What a dead process leaves is made as it would leave it: a message on the
reference platform's screen ending in the cursor, and its record in the
store, owned by a replica id nobody runs (with Redis, holding the chat's
lease until it expires unrenewed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_gateway import RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.recovery import CRASH_NOTE
from hermes_gateway._core.store import ConversationKey, MemoryStore
from hermes_gateway._core.store.base import ReplyInFlight, ShownMessage
from hermes_gateway.testing import ReferencePlatform, eventually

CURSOR = " ▌"
CHAT = ConversationKey("reference", "1")


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)})


def gateway(ref: ReferencePlatform, store: Any, *, redis_url: str | None = None, after_crash: str = "note",
            lease_ttl: float = 1.0) -> Gateway:
    data: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": 50}},
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.1, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        "conversation": {"after_crash": after_crash},
    }
    if redis_url is not None:
        data["coordination"] = {"url": redis_url, "lease_ttl": lease_ttl}
    g = Gateway(parse_config(data, env={}), make_plugins(builtins=(), load_entry_points=False, extra=[ref]))
    g.store = store
    return g


async def leave_a_cut_reply(ref: ReferencePlatform, store: Any, shown: list[str], *, attempt: int = 0,
                            owner: str = "dead-replica") -> ReplyInFlight:
    """The screen and the store as a process killed mid-reply leaves them (cursor on its last message)."""
    probe = gateway(ref, MemoryStore())
    stream = probe.delivery.session("reference", "1").stream
    refs = []
    for i, text in enumerate(shown):
        last = i == len(shown) - 1
        hook = ref.on_delta if last else ref.on_stream_end
        refs.append(await hook(stream, None, text + (CURSOR if last else "")))
    record = ReplyInFlight("r1", "reference", "1", None, "private", "m7", "echo: tell me everything", owner,
                           tuple(ShownMessage(r.message_id, "1", None, t, ended=i < len(shown) - 1)
                                 for i, (r, t) in enumerate(zip(refs, shown))), attempt=attempt)
    await store.begin_reply(record)
    return record


def ends(ref: ReferencePlatform) -> list[str]:
    return [c.text for c in ref.chat("1").calls if c.hook == "on_stream_end" and c.outcome == "ok"]


async def test_at_start_the_cut_reply_loses_its_cursor_and_ends_with_the_note_and_is_in_history():
    ref, store = reference(), MemoryStore()
    await leave_a_cut_reply(ref, store, ["first part", "and the second"])
    async with gateway(ref, store):
        await eventually(lambda: ref.chat("1").screen[-1].endswith(CRASH_NOTE), lambda: ref.chat("1").screen)
        assert ref.chat("1").screen == ["first part", f"and the second\n\n{CRASH_NOTE}"]
        assert await store.replies_in_flight() == []
        assert [m["content"] for m in await store.history(CHAT)] == ["echo: tell me everything",
                                                                     "first part\n\nand the second"]
        # the person goes on, and the model sees the cut turn
        assert (await ref.say("1", "echo: next")).delivered
    assert ref.chat("1").screen[-1] == "next"
    assert ends(ref).count(f"and the second\n\n{CRASH_NOTE}") == 1


async def test_a_reply_cut_before_any_text_gets_the_note_as_a_new_message():
    ref, store = reference(), MemoryStore()
    await leave_a_cut_reply(ref, store, [])
    async with gateway(ref, store):
        await eventually(lambda: ref.chat("1").screen == [CRASH_NOTE], lambda: ref.chat("1").screen)
    assert [m["content"] for m in await store.history(CHAT)] == ["echo: tell me everything"]


async def test_a_restart_after_recovery_finds_nothing_more_to_do():
    ref, store = reference(), MemoryStore()
    await leave_a_cut_reply(ref, store, ["first part"])
    async with gateway(ref, store):
        await eventually(lambda: ref.chat("1").screen == [f"first part\n\n{CRASH_NOTE}"], lambda: ref.chat("1").screen)
    calls = len(ref.chat("1").calls)
    async with gateway(ref, store):
        await asyncio.sleep(0.3)
    assert len(ref.chat("1").calls) == calls


async def test_two_gateways_starting_together_on_one_store_finish_the_reply_once():
    ref, store = reference(), MemoryStore()
    await leave_a_cut_reply(ref, store, ["first part"])
    a, b = gateway(ref, store), gateway(ref, store)
    await asyncio.gather(a.start(), b.start())
    try:
        await eventually(lambda: ref.chat("1").screen == [f"first part\n\n{CRASH_NOTE}"], lambda: ref.chat("1").screen)
        await asyncio.sleep(0.3)
    finally:
        await asyncio.gather(a.stop(), b.stop())
    assert ends(ref) == [f"first part\n\n{CRASH_NOTE}"]
    assert len(await store.history(CHAT)) == 2


async def test_retry_answers_the_message_again_once_and_a_second_crash_gets_the_note():
    ref, store = reference(), MemoryStore()
    await leave_a_cut_reply(ref, store, ["tell me"])
    async with gateway(ref, store, after_crash="retry"):
        await eventually(lambda: ref.chat("1").screen == ["tell me", "tell me everything"],
                         lambda: ref.chat("1").screen)
        await asyncio.sleep(0.3)
        assert ref.chat("1").screen == ["tell me", "tell me everything"]
    assert [m["content"] for m in await store.history(CHAT)] == ["echo: tell me everything", "tell me everything"]
    # the retry itself cut by a crash: no second retry, the note
    ref2, store2 = reference(), MemoryStore()
    await leave_a_cut_reply(ref2, store2, ["tell"], attempt=1)
    async with gateway(ref2, store2, after_crash="retry"):
        await eventually(lambda: ref2.chat("1").screen == [f"tell\n\n{CRASH_NOTE}"], lambda: ref2.chat("1").screen)


async def test_a_record_of_a_running_reply_is_cleared_when_it_ends():
    ref, store = reference(), MemoryStore()
    seen: list[list[ReplyInFlight]] = []
    async with gateway(ref, store) as g:
        reply = asyncio.ensure_future(ref.say("1", "echo: " + " ".join(f"w{i}" for i in range(40))))
        await eventually(lambda: len(ref.chat("1").screen) == 1, lambda: ref.chat("1").screen)
        await asyncio.sleep(0.3)
        seen.append(await store.replies_in_flight())
        assert (await reply).delivered
    [[running]] = seen
    assert running.owner == g.coordination.replica_id and running.text.startswith("echo: w0")
    assert running.shown and running.shown[0].text.startswith("w0") and CURSOR.strip() not in running.shown[0].text
    assert await store.replies_in_flight() == []


async def test_with_replicas_the_chat_of_a_dead_replica_is_finished_once_after_its_lease_expires(redis_server,
                                                                                                 redis_url):
    ref, store = reference(), MemoryStore()  # one store for both, as on PostgreSQL
    a, b = gateway(ref, store, redis_url=redis_url), gateway(ref, store, redis_url=redis_url)
    await leave_a_cut_reply(ref, store, ["first part"])
    lease_key = a.coordination.lease_keys(("reference", "1", None))[0]
    with redis_server.client() as client:
        client.set(lease_key, "dead-replica", px=1500)  # the dead replica's lease, never renewed again
    await asyncio.gather(a.start(), b.start())
    try:
        await asyncio.sleep(0.8)
        assert ref.chat("1").screen == ["first part" + CURSOR]  # not while the lease may still be its owner's
        await eventually(lambda: ref.chat("1").screen == [f"first part\n\n{CRASH_NOTE}"],
                         lambda: ref.chat("1").screen, timeout=10)
        await asyncio.sleep(1.5)  # both replicas swept again meanwhile
    finally:
        await asyncio.gather(a.stop(), b.stop())
    assert ends(ref) == [f"first part\n\n{CRASH_NOTE}"]
    assert await store.replies_in_flight() == []
    assert len(await store.history(CHAT)) == 2


async def test_a_reply_cut_by_shutdown_and_a_message_dropped_by_it_are_told_at_the_next_start():
    ref, store = reference(), MemoryStore()
    g = gateway(ref, store)
    g.shutdown_grace = 0.2
    await g.start()
    long = " ".join(f"w{i}" for i in range(200))
    running = asyncio.ensure_future(g.handle_incoming("reference", "1", f"echo: {long}", message_id="m1"))
    await eventually(lambda: ref.chat("1").screen and "w3" in ref.chat("1").screen[0], lambda: ref.chat("1").screen)
    waiting = g.receive(__import__("hermes_gateway").Incoming("reference", "1", "echo: queued behind", message_id="m2",
                                                              update_id="u2"))
    await g.stop()
    await asyncio.gather(running, waiting, return_exceptions=True)
    [cut] = ref.chat("1").screen
    assert CURSOR.strip() not in cut and long.startswith(cut)  # the stop cut it cleanly; nobody told the person yet
    assert len(await store.replies_in_flight()) == 2
    async with gateway(ref, store):
        await eventually(lambda: ref.chat("1").screen == [f"{cut}\n\n{CRASH_NOTE}", CRASH_NOTE],
                         lambda: ref.chat("1").screen)
    users = [m["content"] for m in await store.history(CHAT) if m["role"] == "user"]
    assert users == [f"echo: {long}", "echo: queued behind"]
    assert await store.replies_in_flight() == []


async def test_on_a_platform_that_cannot_edit_the_shown_messages_stay_and_the_note_is_a_message_of_its_own():
    ref = ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)}, supports_edit=False)
    store = MemoryStore()
    probe = gateway(ref, MemoryStore())
    first = await ref.on_stream_end(probe.delivery.session("reference", "1").stream, None, "a final part")
    await store.begin_reply(ReplyInFlight("r1", "reference", "1", None, "private", "m7", "echo: hi", "dead-replica",
                                          (ShownMessage(first.message_id, "1", None, "a final part", ended=True),)))
    async with gateway(ref, store):
        await eventually(lambda: ref.chat("1").screen == ["a final part", CRASH_NOTE], lambda: ref.chat("1").screen)
    assert [c.hook for c in ref.chat("1").calls if c.kind != "typing"] == ["on_stream_end", "on_stream_end"]


async def test_on_a_platform_that_cannot_edit_a_reply_that_sent_nothing_is_answered_again_once_despite_note():
    """Nothing reached the person (no text sent, no edits): no message to put the note under, so answered again."""
    ref = ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)}, supports_edit=False)
    store = MemoryStore()
    await store.begin_reply(ReplyInFlight("r1", "reference", "1", None, "private", "m7", "echo: tell me", "dead-replica"))
    async with gateway(ref, store, after_crash="note"):
        await eventually(lambda: ref.chat("1").screen == ["tell me"], lambda: ref.chat("1").screen)
    assert ref.chat("1").screen == ["tell me"]  # once, and no note
    assert [m["content"] for m in await store.history(CHAT)] == ["echo: tell me", "tell me"]
    # that retry itself cut before it sent anything: the note, no second retry
    ref2, store2 = (ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)},
                                      supports_edit=False), MemoryStore())
    await store2.begin_reply(ReplyInFlight("r2", "reference", "1", None, "private", "m7", "echo: tell me",
                                           "dead-replica", attempt=1))
    async with gateway(ref2, store2):
        await eventually(lambda: ref2.chat("1").screen == [CRASH_NOTE], lambda: ref2.chat("1").screen)


async def test_a_reply_cut_because_its_replica_lost_the_lease_is_noted_once_the_chat_is_free(redis_server, redis_url):
    from hermes_gateway import Incoming

    ref, store = reference(), MemoryStore()
    a, b = gateway(ref, store, redis_url=redis_url), gateway(ref, store, redis_url=redis_url)
    await asyncio.gather(a.start(), b.start())
    try:
        long = " ".join(f"w{i}" for i in range(200))
        stalled = a.receive(Incoming("reference", "1", f"echo: {long}", update_id="u1", message_id="m1"))
        await eventually(lambda: ref.chat("1").screen and "w5" in ref.chat("1").screen[0], lambda: ref.chat("1").screen)
        with redis_server.client() as client:
            client.delete(a.coordination.lease_keys(("reference", "1", None))[0])  # a stalled past its lease
        answer = b.receive(Incoming("reference", "1", "echo: taken over", update_id="u2", message_id="m2"))
        assert (await stalled).interrupted and (await answer).delivered
        await eventually(lambda: ref.chat("1").screen[0].endswith(CRASH_NOTE), lambda: ref.chat("1").screen,
                         timeout=10)
        await asyncio.sleep(1.2)
    finally:
        await asyncio.gather(a.stop(), b.stop())
    cut, taken = ref.chat("1").screen
    assert long.startswith(cut[: -len(CRASH_NOTE)].strip()) and taken == "taken over"
    assert sum(t.endswith(CRASH_NOTE) for t in ends(ref)) == 1
    assert await store.replies_in_flight() == []
