"""What people send, as the client hands it to the core: chats, groups and mentions, edits, files fetched only
when asked; and what it skips (reactions, its own messages, group updates)."""

from __future__ import annotations

from hermes_gateway.testing import samples
from signal_test_support import ACCOUNT, ALICE, BOB, GROUP, eventually, runner


async def received(run, count):
    await eventually(lambda: len(run.received) >= count, lambda: run.received)
    return run.received


async def test_a_direct_message_and_a_group_message(daemon):
    daemon.group(GROUP, [ALICE, BOB])
    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        first = daemon.push_message(ALICE, "hello")
        daemon.push_message(BOB, "hi all", group=GROUP)
        direct, group = await received(run, 2)
    assert (direct.chat_id, direct.chat_kind, direct.sender_id, direct.text) == (ALICE, "private", ALICE, "hello")
    assert direct.message_id == f"{ALICE}/{first}" and direct.update_id == f"{ALICE}/{first}"
    assert (group.chat_id, group.chat_kind, group.sender_id, group.mentioned) == (f"group:{GROUP}", "group", BOB,
                                                                                  False)


async def test_a_mention_by_number_uuid_or_a_quote_of_the_bot_counts(daemon):
    daemon.group(GROUP, [ALICE, BOB])
    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, "\ufffc what time is it?", group=GROUP, mentions=[daemon.mention_of_bot(0)])
        by_uuid = {"uuid": daemon.account_uuid, "start": 4, "length": 1}
        daemon.push_message(ALICE, "hey \ufffc", group=GROUP, mentions=[by_uuid])
        daemon.push_message(ALICE, "and you?", group=GROUP, quote=1)
        other = {"name": "Bob", "number": BOB, "uuid": daemon.person(BOB).uuid, "start": 0, "length": 1}
        daemon.push_message(ALICE, "\ufffc look", group=GROUP, mentions=[other])
        messages = await received(run, 4)
    assert [(m.text, m.mentioned) for m in messages] == [("what time is it?", True), ("hey", True),
                                                          ("and you?", True), ("@Bob look", False)]


async def test_an_edit_names_the_original_and_a_reaction_or_our_own_echo_is_skipped(daemon):
    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        sent = daemon.push_message(ALICE, "helo")
        daemon.push_reaction(ALICE, ACCOUNT, 123, "👍")
        daemon.push_event(daemon._envelope(ACCOUNT, {"syncMessage": {"sentMessage": {"message": "mine"}}}, 5))
        daemon.push_event({"envelope": {"sourceNumber": ALICE, "timestamp": 7,
                                        "dataMessage": {"message": "x", "groupInfo": {"groupId": GROUP,
                                                                                     "type": "UPDATE"}}}})
        edit = daemon.push_edit(ALICE, sent, "hello")
        first, second = await received(run, 2)
    assert second.edit_of == first.message_id == f"{ALICE}/{sent}"
    assert second.text == "hello" and second.update_id == f"edit/{ALICE}/{edit}"
    assert len(run.received) == 2


async def test_a_file_is_fetched_only_when_the_core_asks_and_arrives_whole(daemon):
    picture = samples.png(8, 8, (200, 10, 10))
    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        entry = daemon.upload(picture, "image/png", "red.png")
        daemon.push_message(ALICE, "look", attachments=[entry, {"id": "", "contentType": "x/y"}])
        (message,) = await received(run, 1)
        assert daemon.calls_of("getAttachment") == []
        (attachment,) = message.attachments
        assert (attachment.kind, attachment.mime, attachment.size, attachment.filename) == (
            "image", "image/png", len(picture), "red.png")
        data = b"".join([chunk async for chunk in attachment.fetch()])
    assert data == picture and daemon.calls_of("getAttachment") == [{"id": entry["id"]}]


async def test_a_file_the_daemon_cannot_give_is_a_fetch_error_in_one_line(daemon):
    from hermes_gateway import FetchError

    async with runner(daemon) as run:
        await eventually(lambda: daemon.listening == 1, lambda: daemon.calls)
        daemon.push_message(ALICE, "", attachments=[{"id": "gone.bin", "contentType": "application/pdf",
                                                     "size": 10, "filename": "a.pdf"}])
        (message,) = await received(run, 1)
        try:
            [chunk async for chunk in message.attachments[0].fetch()]
        except FetchError as exc:
            assert "\n" not in str(exc) and "a file" in str(exc)
        else:
            raise AssertionError("a missing file was fetched")
