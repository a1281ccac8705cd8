"""Files people send reach the core as attachments: photo, document, voice, audio, video, video note.

Through python-telegram-bot and the Bot API emulator, whose file server
logs every ``getFile`` and every download: the test reads the ``Incoming``
the client hands the core, fetches its attachments as the core would, and
compares the bytes with what the emulator served.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib

import pytest

from hermes_gateway import FetchError
from hermes_gateway.testing import PlatformRunner
from hermes_telegram import plugin
from hermes_telegram.emulator import BotApiEmulator
from hermes_gateway.testing.samples import voice_ogg
from hermes_telegram.inbound_media import DOWNLOAD_LIMIT
from telegram_test_support import TOKEN, eventually, gateway_for, section, spy_on_receive, webhook_gateway


def png(width: int, height: int) -> bytes:
    """A real PNG of that size (one colour), made without Pillow."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\x30\x60\x90" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PHOTO = png(320, 200)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def polling(api: BotApiEmulator, **settings) -> PlatformRunner:
    """The plugin's client, long polling the emulator (``runner.received``: what it hands the core)."""
    return PlatformRunner(plugin, section(api.base_url, poll_timeout=1, **settings))


async def received_one(runner: PlatformRunner):
    await eventually(lambda: len(runner.received) == 1, lambda: runner.received)
    return runner.received[0]


async def fetched(attachment) -> bytes:
    chunks = [chunk async for chunk in attachment.fetch()]
    assert all(isinstance(chunk, bytes) and chunk for chunk in chunks)
    return b"".join(chunks)


async def test_a_photo_with_a_caption_is_the_largest_size_and_the_caption_is_the_text(api):
    async with polling(api) as runner:
        await api.push_photo(42, PHOTO, caption="what is on this picture?")
        incoming = await received_one(runner)
        assert incoming.text == "what is on this picture?"
        [photo] = incoming.attachments
        assert (photo.kind, photo.mime, photo.size) == ("image", "image/jpeg", len(PHOTO))
        assert api.files.lookups == [] and api.files.downloads == [], "nothing is fetched until the core asks"
        assert await fetched(photo) == PHOTO, "the largest size, not the thumbnail"
    assert len(api.files.lookups) == 1 and len(api.files.downloaded) == 1


async def test_a_pdf_keeps_its_name_and_type(api):
    async with polling(api) as runner:
        await api.push_document(42, PDF, filename="invoice.pdf", mime="application/pdf")
        incoming = await received_one(runner)
        assert incoming.text == ""
        [document] = incoming.attachments
        assert (document.kind, document.mime, document.size, document.filename) == (
            "document", "application/pdf", len(PDF), "invoice.pdf")
        assert await fetched(document) == PDF


async def test_a_voice_note_is_a_voice_attachment_of_real_ogg_opus(api):
    voice = voice_ogg(0.5)
    async with polling(api) as runner:
        await api.push_voice(42, voice)
        incoming = await received_one(runner)
        [note] = incoming.attachments
        assert (note.kind, note.mime, note.filename) == ("voice", "audio/ogg", "voice.ogg")
        data = await fetched(note)
    assert data == voice and data.startswith(b"OggS") and b"OpusHead" in data


@pytest.mark.parametrize("push, kind, mime, filename", [
    (lambda api: api.push_audio(42, b"ID3 an mp3", filename="song.mp3"), "audio", "audio/mpeg", "song.mp3"),
    (lambda api: api.push_video(42, b"\0\0\0\x18ftypmp42 a video", filename="clip.mp4"), "video", "video/mp4",
     "clip.mp4"),
    (lambda api: api.push_video(42, b"\0\0\0\x18ftypmp42 round", note=True), "video", "video/mp4",
     "video_note.mp4"),
    (lambda api: api.push_document(42, PHOTO, filename="screenshot.png", mime="image/png"), "image", "image/png",
     "screenshot.png"),
], ids=["audio", "video", "video_note", "image_sent_as_a_file"])
async def test_each_kind_of_file_is_mapped(api, push, kind, mime, filename):
    async with polling(api) as runner:
        await push(api)
        incoming = await received_one(runner)
        [attachment] = incoming.attachments
        assert (attachment.kind, attachment.mime, attachment.filename) == (kind, mime, filename)
        [stored] = api.files.files.values()
        assert await fetched(attachment) == stored.data


async def test_a_file_streams_in_chunks_never_whole(api):
    data = os.urandom(1_000_000)
    async with polling(api) as runner:
        await api.push_document(42, data, filename="noise.bin", mime="application/octet-stream")
        [document] = (await received_one(runner)).attachments
        chunks = [chunk async for chunk in document.fetch()]
    assert b"".join(chunks) == data
    assert len(chunks) >= 15 and max(map(len, chunks)) <= 64 * 1024


async def test_a_19_mb_file_is_never_held_in_memory_whole(api):
    """The emulator generates the bytes as it serves them; what the download allocates at its peak is measured."""
    import tracemalloc

    size = DOWNLOAD_LIMIT - 1024 * 1024
    async with polling(api) as runner:
        await api.push_document(42, None, size=size, filename="video.bin", mime="application/octet-stream")
        [document] = (await received_one(runner)).attachments
        received = 0
        tracemalloc.start()
        try:
            async for chunk in document.fetch():
                received += len(chunk)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert received == size
    assert peak < 4 * 1024 * 1024, f"{peak / 1_048_576:.1f} MB allocated at once for a {size / 1_048_576:.0f} MB file"


async def test_by_webhook_a_photo_arrives_as_an_attachment_and_a_redelivery_downloads_nothing_more(api):
    gateway = webhook_gateway(api.base_url)
    async with gateway:
        seen, _ = spy_on_receive(gateway)
        update = await api.push_photo(42, PHOTO, caption="echo: by webhook")
        await eventually(lambda: api.screen(42) != [], lambda: api.chat(42).messages)
        assert await api.deliver_again(update) == 200
        await eventually(lambda: len(seen) == 2, lambda: seen)
        await api.push_message(42, "echo: done")
        await eventually(lambda: api.screen(42)[-1:] == ["done"], lambda: api.chat(42).messages)
    assert seen[0].text == "echo: by webhook" and [a.kind for a in seen[0].attachments] == ["image"]
    assert seen[0].attachments[0].size == len(PHOTO)
    assert len(api.files.lookups) <= 1 and len(api.files.downloads) <= 1, "the redelivery fetched nothing"


async def test_a_file_over_20_mb_is_refused_before_anything_is_downloaded(api):
    big = DOWNLOAD_LIMIT + 1
    async with polling(api) as runner:
        await api.push_document(42, None, size=big, filename="backup.zip", mime="application/zip")
        incoming = await received_one(runner)
        [document] = incoming.attachments
        assert document.size == big
        with pytest.raises(FetchError, match="too large for a bot to download from Telegram .* 20 MB"):
            await fetched(document)
    assert api.files.lookups == [] and api.files.downloads == []


async def test_a_file_telegram_says_is_too_big_is_refused_without_a_download(api):
    """A message without ``file_size``: getFile's "file is too big" is the refusal, and nothing is downloaded."""
    stored = api.files.add("document", None, size=DOWNLOAD_LIMIT * 2, extension="iso")
    async with polling(api) as runner:
        await api.push_content(42, "document", {"file_id": stored.file_id, "file_unique_id": stored.file_unique_id,
                                              "file_name": "disk.iso"}, "", {})
        incoming = await received_one(runner)
        [document] = incoming.attachments
        assert document.size is None
        with pytest.raises(FetchError, match="too large"):
            await fetched(document)
    assert api.files.lookups == [stored.file_id] and api.files.downloads == []


async def test_an_attachment_is_fetched_at_most_once(api):
    async with polling(api) as runner:
        await api.push_document(42, PDF)
        [document] = (await received_one(runner)).attachments
        assert await fetched(document) == PDF
        with pytest.raises(FetchError, match="already fetched"):
            document.fetch()
    assert len(api.files.downloads) == 1


async def test_base_file_url_says_where_files_come_from_and_a_failure_never_shows_the_token(api):
    async with BotApiEmulator(TOKEN) as elsewhere:  # a second file server: files come from there, not base_url's
        moved = elsewhere.base_url.replace("/bot", "/file/bot")
        async with polling(api, base_file_url=moved) as runner:
            await api.push_document(42, PDF)
            [document] = (await received_one(runner)).attachments
            with pytest.raises(FetchError) as caught:
                await fetched(document)
    assert "404" in str(caught.value)
    assert TOKEN.split(":")[1] not in str(caught.value) and "127.0.0.1" not in str(caught.value)
    assert api.files.downloads == [] and [d.status for d in elsewhere.files.downloads] == [404]


async def test_a_caption_that_mentions_the_bot_in_a_group_is_addressed_to_it(api):
    async with polling(api) as runner:
        await api.push_photo(-3003, PHOTO, caption="@hermes_test_bot look", chat_type="supergroup")
        await api.push_photo(-3003, PHOTO, caption="look at this, everyone", chat_type="supergroup")
        await eventually(lambda: len(runner.received) == 2, lambda: runner.received)
    assert [i.mentioned for i in runner.received] == [True, False]


async def test_a_shared_location_venue_contact_poll_or_die_is_heard_as_one_line_and_a_sticker_is_not(api):
    """These reached nobody before: a person who shares where they are asks something of it."""
    sticker = {"file_id": "CAACsticker1", "file_unique_id": "AgADst1", "width": 512, "height": 512,
               "is_animated": False, "is_video": False, "type": "regular"}
    where = {"latitude": 52.520008, "longitude": 13.404954, "live_period": 900}
    poll = {"id": "p1", "question": "Lunch?", "options": [{"text": "Pizza", "voter_count": 0, "persistent_id": "a"},
                                                           {"text": "Sushi " + "x" * 400, "voter_count": 0,
                                                            "persistent_id": "b"}],
            "total_voter_count": 0, "is_closed": False, "is_anonymous": True, "type": "regular",
            "allows_multiple_answers": False, "allows_revoting": True, "members_only": False}  # Bot API 10.0
    async with polling(api) as runner:
        await api.push_content(42, "sticker", sticker)
        await api.push_content(42, "location", where)
        await api.push_update({"edited_message": {  # the live location moved: not a new question
            "message_id": 999, "date": 1, "edit_date": 2, "chat": {"id": 42, "type": "private", "first_name": "Ada"},
            "from": {"id": 1001, "is_bot": False, "first_name": "Ada"}, "location": {**where, "latitude": 52.53}}})
        await api.push_content(42, "venue", {"location": {"latitude": 48.8584, "longitude": 2.2945},
                                             "title": "Eiffel Tower", "address": "Champ de Mars, Paris"})
        await api.push_content(42, "contact", {"phone_number": "+33 1 23 45 67 89", "first_name": "Ada",
                                               "last_name": "Lovelace"})
        await api.push_content(42, "poll", poll)
        await api.push_content(42, "dice", {"emoji": "🎲", "value": 4})
        await api.push_message(42, "and a text")
        await eventually(lambda: len(runner.received) == 6, lambda: runner.received)
    assert [i.text for i in runner.received] == [
        "[a location (live): 52.520008, 13.404954]",
        "[a place: Eiffel Tower, Champ de Mars, Paris (48.858400, 2.294500)]",
        "[a contact: Ada Lovelace, +33 1 23 45 67 89]",
        "[a poll: Lunch? — Pizza / Sushi " + "x" * 293 + "…]",
        "[a 🎲 thrown: 4]",
        "and a text"]


async def test_a_forwarded_message_is_quoted_under_who_it_came_from(api):
    """A forward's words are someone else's: the model reads them quoted, and a forwarded /command is no command."""
    chat = {"id": 42, "type": "private", "first_name": "Ada"}
    ada = {"id": 1001, "is_bot": False, "first_name": "Ada"}
    grace = {"type": "user", "date": 1, "sender_user": {"id": 7, "is_bot": False, "first_name": "Grace",
                                                        "last_name": "Hopper"}}
    channel = {"type": "channel", "date": 1, "message_id": 5,
               "chat": {"id": -100123, "type": "channel", "title": "Release notes"}}
    async with polling(api) as runner:
        for n, (origin, text) in enumerate([(grace, "Deploy at 5.\nNot before."), (channel, "/start v2 is out")]):
            await api.push_update({"message": {"message_id": 900 + n, "date": 2, "chat": chat, "from": ada,
                                               "text": text, "forward_origin": origin}})
        await eventually(lambda: len(runner.received) == 2, lambda: runner.received)
    assert [i.text for i in runner.received] == [
        "[forwarded message from Grace Hopper]\n> Deploy at 5.\n> Not before.",
        "[forwarded message from Release notes]\n> /start v2 is out"]


async def test_an_update_python_telegram_bot_cannot_read_is_skipped_and_the_bot_still_hears_the_rest(api, caplog):
    """A poll from a server older than Bot API 9.6 has no ``persistent_id``, which python-telegram-bot 22 requires:
    the whole getUpdates failed, the same update came back at every poll, and the bot heard nothing more."""
    old_poll = {"id": "p1", "question": "Lunch?", "options": [{"text": "Pizza", "voter_count": 0}],
                "total_voter_count": 0, "is_closed": False, "is_anonymous": True, "type": "regular",
                "allows_multiple_answers": False}
    caplog.set_level(logging.WARNING, logger="hermes_telegram")
    async with polling(api) as runner:
        await api.push_message(42, "before it")
        unreadable = await api.push_content(42, "poll", old_poll)
        await api.push_message(42, "after it")
        await eventually(lambda: len(runner.received) == 2, lambda: runner.received)
        await api.push_message(42, "and later")
        await eventually(lambda: len(runner.received) == 3, lambda: runner.received)
    assert [i.text for i in runner.received] == ["before it", "after it", "and later"]
    skipped = [r.getMessage() for r in caplog.records if "skipped update" in r.getMessage()]
    assert len(skipped) == 1 and f"update {unreadable}" in skipped[0]


async def test_messages_the_core_drops_download_nothing(api):
    """An unknown user, a duplicate, an unmentioned group message: their files are never looked up."""
    gateway = gateway_for(api.base_url, allowed_chats=[42, -4004])
    async with gateway:
        await api.push_photo(666, PHOTO, caption="echo: let me in")                    # not an allowed chat
        await api.push_photo(-4004, PHOTO, caption="echo: among ourselves", chat_type="group")  # not mentioned
        await api.push_message(42, "echo: done")
        await eventually(lambda: api.screen(42) == ["done"], lambda: api.chat(42).messages)
    assert api.screen(666) == [] and api.screen(-4004) == []
    assert api.files.lookups == [] and api.files.downloads == []


async def test_a_photo_with_a_caption_is_seen_by_the_model(api):
    gateway = gateway_for(api.base_url)
    async with gateway:
        await api.push_photo(42, PHOTO, caption="describe: what is this?")
        await eventually(lambda: api.screen(42) != [], lambda: api.chat(42).messages, timeout=10)
    assert api.screen(42) == ["I see a PNG image of 320x200 pixels."]
    [largest] = [f for f in api.files.files.values() if f.data == PHOTO]
    assert api.files.downloaded == [largest.file_path], "the largest size, once"
