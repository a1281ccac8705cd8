"""The websocket as the client reads it: posts, edits, files, hostile frames, reconnects, and the catch-up.

Each test runs one client as the gateway builds it (``PlatformRunner``)
against the emulator and reads what it handed the core (``received``).
"""

from __future__ import annotations

import json
import logging

from hermes_mattermost.emulator import ALICE_ID, BOT_ID, BOT_TOKEN
from mattermost_test_support import eventually, runner

CHANNEL, DM = "channel0000000000000000000", "dm00000000000000000000000a"


async def connected(mm, r):
    await eventually(lambda: mm.connected() == 1 and r.context.connection == "connected",
                     lambda: (mm.connected(), r.context.connection))


async def test_a_post_becomes_an_incoming_and_the_bots_own_posts_do_not(mm):
    mm.channel(CHANNEL, "O")
    async with runner(mm) as r:
        await connected(mm, r)
        post = await mm.post_as(ALICE_ID, CHANNEL, "@hermes  echo: hi")
        await eventually(lambda: len(r.received) == 1, lambda: r.received)
        [incoming] = r.received
        assert (incoming.chat_id, incoming.text, incoming.sender_id, incoming.update_id, incoming.thread_id,
                incoming.chat_kind, incoming.mentioned) == (CHANNEL, "echo: hi", ALICE_ID, post, post, "channel", True)
        await mm.post_as(BOT_ID, CHANNEL, "the bot's own post, broadcast back")
        await mm.edit_as(post, "@hermes echo: hi again")
        await eventually(lambda: len(r.received) == 2, lambda: r.received)
        edit = r.received[1]
        assert edit.edit_of == post and edit.text == "echo: hi again" and edit.update_id.startswith(post + ":edit:")


async def test_files_arrive_as_attachments_fetched_only_when_asked(mm):
    mm.channel(DM, "D")
    async with runner(mm) as r:
        await connected(mm, r)
        await mm.post_as(ALICE_ID, DM, "what is this?", files=[("notes.pdf", b"%PDF-1.4 tiny", "application/pdf"),
                                                                ("cat.png", b"\x89PNG....", "image/png")])
        await eventually(lambda: len(r.received) == 1, lambda: r.received)
        [incoming] = r.received
        assert incoming.chat_kind == "dm" and incoming.thread_id is None
        assert [(a.kind, a.filename, a.size, a.mime) for a in incoming.attachments] == [
            ("document", "notes.pdf", 13, "application/pdf"), ("image", "cat.png", 8, "image/png")]
        assert mm.downloads == [], "nothing is downloaded before the core asks"
        got = b"".join([chunk async for chunk in incoming.attachments[0].fetch()])
        assert got == b"%PDF-1.4 tiny" and len(mm.downloads) == 1


async def test_hostile_frames_are_skipped_in_one_line_each_and_a_huge_one_reconnects(mm, caplog):
    mm.channel(DM, "D")
    caplog.set_level(logging.INFO, logger="hermes_mattermost")
    bad = ["not json", "[1, 2]", json.dumps({"seq_reply": 7, "status": "OK"}),
           json.dumps({"event": "posted", "data": "a string"}),
           json.dumps({"event": "posted", "data": {"post": "{not json"}}),
           json.dumps({"event": "posted", "data": {"post": json.dumps({"id": 5, "channel_id": DM})}}),
           json.dumps({"event": "posted", "data": {"post": json.dumps(["a", "list"])}}),
           json.dumps({"event": "post_edited", "data": {"post": json.dumps({"id": "x", "channel_id": DM,
                                                                            "user_id": ALICE_ID, "message": 7})}}),
           json.dumps({"event": "typing", "data": None})]
    async with runner(mm) as r:
        await connected(mm, r)
        for frame in bad:
            await mm.send_raw(frame)
        await mm.post_as(ALICE_ID, DM, "echo: still here")
        await eventually(lambda: len(r.received) == 1, lambda: r.received)
        skipped = [rec for rec in caplog.records if "skipped a malformed websocket event" in rec.getMessage()]
        assert len(skipped) == 7 == r.context.counts["malformed_event"], [s.getMessage() for s in skipped]
        assert all("\n" not in s.getMessage() for s in skipped)

        await mm.send_raw("x" * (5 * 1024 * 1024))  # over the 4 MiB frame limit: the socket closes, and reconnects
        await eventually(lambda: r.context.connection == "disconnected", lambda: r.context.connection)
        await connected(mm, r)
        await mm.post_as(ALICE_ID, DM, "echo: after the reconnect")
        await eventually(lambda: len(r.received) == 2, lambda: r.received)


async def test_a_token_revoked_while_running_is_reported_without_showing_it(mm):
    """The server stops taking the token: the reconnect's authentication_challenge is answered FAIL, and the
    dashboard says so (the token itself never in the error)."""
    mm.channel(DM, "D")
    async with runner(mm) as r:
        await connected(mm, r)
        mm.users[BOT_ID].token = None
        await mm.drop_sockets(refuse=False)
        await eventually(lambda: "refused the token" in (r.context.connection_error or ""),
                         lambda: r.context.connection_error)
        assert BOT_TOKEN not in r.context.connection_error


async def test_posts_sent_while_the_socket_was_down_are_fetched_once_after_the_reconnect(mm):
    mm.channel(CHANNEL, "O")
    async with runner(mm) as r:
        await connected(mm, r)
        await mm.post_as(ALICE_ID, CHANNEL, "@hermes echo: before")
        await eventually(lambda: len(r.received) == 1, lambda: r.received)
        await mm.drop_sockets(refuse=True)
        await eventually(lambda: r.context.connection == "disconnected", lambda: r.context.connection)
        missed = [await mm.post_as(ALICE_ID, CHANNEL, f"@hermes echo: while down {i}") for i in range(2)]
        await mm.post_as(BOT_ID, CHANNEL, "a post of the bot's own")
        mm.accept_sockets()
        await eventually(lambda: len(r.received) == 3, lambda: r.received)
        assert [i.update_id for i in r.received[1:]] == missed
        assert [i.text for i in r.received[1:]] == ["echo: while down 0", "echo: while down 1"]
        assert all(i.mentioned and i.thread_id == i.update_id for i in r.received[1:])
        await mm.post_as(ALICE_ID, CHANNEL, "@hermes echo: after")
        await eventually(lambda: len(r.received) == 4, lambda: r.received)
        assert r.received[3].text == "echo: after"
