"""The client's calls, one at a time, against the emulator: errors, limits, length, reactions, typing."""

from __future__ import annotations

import pytest

from hermes_gateway import DeliveryError, MessageRef, RateLimited, Stream, StreamSettings
from hermes_mattermost.emulator import ALICE_ID, MattermostEmulator
from mattermost_test_support import runner

CHANNEL = "client0000000000000000000a"


def stream(r, thread=None):
    return Stream(platform=r.platform, chat_id=CHANNEL, thread_id=thread, settings=StreamSettings(enabled=True))


async def test_a_429_is_rate_limited_for_the_bot_with_the_servers_wait(mm):
    mm.channel(CHANNEL)
    async with runner(mm, start=False) as r:
        mm.inject(429, retry_after=7)
        with pytest.raises(RateLimited) as caught:
            await r.client.on_stream_end(stream(r), None, "too soon")
        assert caught.value.retry_after == 7 and caught.value.scope == "bot"
        mm.inject(500)
        with pytest.raises(DeliveryError) as failed:
            await r.client.on_stream_end(stream(r), None, "server trouble")
        assert failed.value.retryable
        assert mm.screen(CHANNEL) == []


async def test_no_remaining_calls_refuses_the_next_one_before_it_earns_a_429():
    async with MattermostEmulator(per_sec=2, max_burst=0) as mm:  # one call, then one every half second
        mm.channel(CHANNEL)
        async with runner(mm, start=False) as r:
            ref = await r.client.on_delta(stream(r), None, "one")
            with pytest.raises(RateLimited) as caught:
                await r.client.on_delta(stream(r), ref, "one two")
            assert 0 < caught.value.retry_after <= 1.0 and caught.value.scope == "bot"
        assert mm.count(429) == 0 and mm.screen(CHANNEL) == ["one"]


async def test_a_server_with_a_smaller_max_post_size_gets_the_final_text_in_more_posts():
    async with MattermostEmulator(max_post_size=100) as mm:
        mm.channel(CHANNEL)
        text = " ".join(f"w{i}" for i in range(80))  # ~310 characters
        async with runner(mm) as r:
            assert r.client.max_post == 100
            ref = await r.client.on_delta(stream(r, None), None, text)
            await r.client.on_stream_end(stream(r), ref, text)
        shown = mm.screen(CHANNEL)
        assert len(shown) >= 4 and all(len(t) <= 100 for t in shown)
        assert " ".join(shown).split() == text.split()


async def test_reactions_typing_and_threads(mm):
    mm.channel(CHANNEL)
    async with runner(mm, start=False) as r:
        root = await mm.post_as(ALICE_ID, CHANNEL, "hello")
        await r.client.react(CHANNEL, root, "👀")
        await r.client.react(CHANNEL, root, ":white_check_mark:")
        assert mm.posts[root].reactions == [("botuserid00000000000000000", "eyes"),
                                            ("botuserid00000000000000000", "white_check_mark")]
        with pytest.raises(DeliveryError):
            await r.client.react(CHANNEL, root, "🦜")
        await r.client.on_stream_start(stream(r, root))
        assert mm.typing == [(CHANNEL, root)]
        ref = await r.client.on_stream_end(stream(r, root), None, "in the thread")
        assert isinstance(ref, MessageRef) and ref.thread_id == root
        assert mm.posts[ref.message_id].root_id == root


async def test_a_large_answer_is_read_whole():
    """The catch-up's page of posts arrives in many chunks: all of it is read (not the first chunk only)."""
    async with MattermostEmulator(rate_limit=False) as mm:
        mm.channel(CHANNEL)
        for i in range(40):
            await mm.post_as(ALICE_ID, CHANNEL, f"post {i} " + "x" * 8000)
        async with runner(mm, start=False) as r:
            page = await r.client.api.call("GET", f"/channels/{CHANNEL}/posts", "catch-up", params={"since": "1"})
        assert len(page["order"]) == 40
