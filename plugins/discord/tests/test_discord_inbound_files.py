"""Files people send on Discord reach the core as Attachments, and their bytes stream from the emulator's CDN.

Through the real discord.py client: the emulator pushes MESSAGE_CREATE with
attachments, the plugin hands the core an ``Incoming`` (``runner.received``),
and the test fetches each attachment as the core would, comparing the bytes
with what the emulator served and the CDN's download log with what was asked.
"""

from __future__ import annotations

import pytest

from discord_test_support import BOT_ID, eventually, runner_for
from hermes_gateway import FetchError
from hermes_gateway.testing import samples
from hermes_discord.emulator_files import PersonFile, pdf, photo, too_large, voice_note


async def fetched(attachment) -> bytes:
    """What the core would get: every chunk of ``attachment.fetch()``, joined."""
    return b"".join([chunk async for chunk in attachment.fetch()])


async def received_one(api, runner, channel, caption, files, **kw):
    """Push one message with ``files``; the Incoming the plugin handed the core for it."""
    before = len(runner.received)
    await api.push_message(channel, caption, attachments=files, **kw)
    await eventually(lambda: len(runner.received) > before, lambda: runner.received)
    return runner.received[-1]


async def test_a_photo_with_a_caption_arrives_as_an_image_attachment_fetched_only_when_asked(loose_api):
    api = loose_api
    dm = api.dm()
    picture = photo(64, 48)
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, dm, "what is in this picture?", (picture,))
        assert api.cdn.downloads == [], "nothing is downloaded before the core asks"
        [attachment] = incoming.attachments
        assert incoming.text == "what is in this picture?" and incoming.chat_kind == "dm"
        assert (attachment.kind, attachment.mime, attachment.size, attachment.filename) == \
            ("image", "image/png", len(picture.data), "photo.png")
        assert await fetched(attachment) == picture.data
    [download] = api.cdn.downloads
    assert (download.filename, download.status, download.sent) == ("photo.png", 200, len(picture.data))


async def test_a_pdf_a_voice_message_and_a_file_without_a_content_type_keep_their_kinds_and_bytes(loose_api):
    api = loose_api
    document, voice = pdf("Quarterly numbers"), voice_note(1.0)
    untyped = PersonFile("notes.txt", b"line one\nline two\n", content_type="")
    async with runner_for(api, start=True) as runner:
        in_server = await received_one(api, runner, api.general, "", (document, untyped), mention=True)
        in_dm = await received_one(api, runner, api.dm(), "", (voice,))
        assert in_server.text == "" and in_server.mentioned and in_dm.text == ""
        assert [(a.kind, a.mime, a.filename) for a in in_server.attachments] == \
            [("document", "application/pdf", "report.pdf"), ("document", "text/plain", "notes.txt")]
        [note] = in_dm.attachments
        assert (note.kind, note.mime, note.filename, note.size) == \
            ("voice", "audio/ogg", "voice-message.ogg", len(voice.data))
        assert [await fetched(a) for a in in_server.attachments] == [document.data, untyped.data]
        body = await fetched(note)
    assert body == voice.data and body.startswith(b"OggS") and b"OpusHead" in body
    assert [d.filename for d in api.cdn.downloaded()] == ["report.pdf", "notes.txt", "voice-message.ogg"]


async def test_a_large_file_streams_in_chunks_never_one_piece(loose_api):
    api = loose_api
    big = PersonFile("big.bin", bytes(range(256)) * 4096 * 3)  # 3 MiB
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, api.dm(), "keep this", (big,))
        chunks = [chunk async for chunk in incoming.attachments[0].fetch()]
    assert b"".join(chunks) == big.data
    assert len(chunks) > 1 and max(map(len, chunks)) <= 64 * 1024


async def test_a_too_large_file_declares_its_size_and_downloads_nothing_until_asked(loose_api):
    """The core refuses it by its declared size, before asking for a byte (its limit, not the plugin's)."""
    api = loose_api
    huge = too_large(600 * 1024 * 1024)
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, api.dm(), "here is the video", (huge,))
    [attachment] = incoming.attachments
    assert (attachment.kind, attachment.size, attachment.mime) == ("video", 600 * 1024 * 1024, "video/mp4")
    assert api.cdn.downloads == []


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_more_bytes_than_discord_declared_is_a_fetch_error(loose_api, chunked):
    """Declared 1000 bytes, served 200 000: refused at the Content-Length, or cut off once past the size."""
    api = loose_api
    liar = PersonFile("small.png", samples.png(400, 300) + bytes(200_000), "image/png", declared_size=1000,
                      chunked=chunked)
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, api.dm(), "look", (liar,))
        got = bytearray()
        with pytest.raises(FetchError, match="small.png") as caught:
            async for chunk in incoming.attachments[0].fetch():
                got += chunk
    assert len(got) <= 1000, "never more than declared reaches the core"
    assert "1000" in str(caught.value)


async def test_an_expired_link_is_a_fetch_error_naming_the_file_not_the_signed_url(loose_api):
    api = loose_api
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, api.dm(), "", (pdf(),))
        [attachment] = incoming.attachments
        [posted] = api.cdn.posted
        api.cdn.expire(posted)
        with pytest.raises(FetchError) as caught:
            await fetched(attachment)
    message = str(caught.value)
    assert "report.pdf" in message and "404" in message and "hm=" not in message and "127.0.0.1" not in message
    assert [(d.filename, d.status) for d in api.cdn.downloads] == [("report.pdf", 404)]


async def test_a_signed_link_with_a_wrong_signature_is_refused_by_the_cdn(loose_api):
    """The emulator's CDN is as strict as Discord's: the link must be the one Discord signed."""
    api = loose_api
    async with runner_for(api, start=True) as runner:
        incoming = await received_one(api, runner, api.dm(), "", (photo(),))
        session = runner.client.downloads.session()
        [url] = [posted.url for posted in api.cdn.posted.values()]
        async with session.get(url.replace("hm=", "hm=0")) as response:
            assert response.status == 404
        async with session.get(url) as response:
            assert response.status == 200 and await response.read() == photo().data
        assert incoming.attachments[0].filename == "photo.png"


async def test_a_download_that_goes_quiet_is_a_fetch_error(loose_api):
    api = loose_api
    slow = PersonFile("slow.bin", bytes(200_000), stall=1.5)
    async with runner_for(api, start=True) as runner:
        runner.client.downloads.read_timeout = 0.2
        incoming = await received_one(api, runner, api.dm(), "slow", (slow,))
        with pytest.raises(FetchError, match="slow.bin.*could not be downloaded"):
            await fetched(incoming.attachments[0])


async def test_another_bot_is_handed_on_marked_from_bot_the_own_and_empty_messages_are_not(loose_api):
    """``author.bot`` becomes ``Incoming.from_bot`` (the core's ``groups.bots`` decides, issue 38); this bot's
    own messages and empty ones never reach the core; nothing is downloaded by the plugin either way."""
    api = loose_api
    dm = api.dm()
    async with runner_for(api, start=True) as runner:
        await api.push_message(dm, "", attachments=(photo(),), author_id="3003", author_name="ci-bot", bot=True)
        await api.push_message(dm, "echo: me", author_id=BOT_ID, bot=True)  # this bot's own message
        await api.push_message(dm, "")  # neither words nor files (a sticker alone, say)
        await api.push_message(dm, "echo: last", author_name="ada")
        await eventually(lambda: len(runner.received) >= 2, lambda: runner.received)
    assert [(i.text, len(i.attachments), i.from_bot, i.sender_name) for i in runner.received] == [
        ("", 1, True, "ci-bot"), ("echo: last", 0, False, "ada")]
    assert api.cdn.downloads == []



async def test_a_forwarded_message_reaches_the_core_with_the_originals_words_quoted(loose_api):
    """Discord's forward carries no words of its own (the original is in ``message_snapshots``): it was dropped as
    empty, so a person who forwarded something to the bot got no answer."""
    api = loose_api
    dm = api.dm()
    async with runner_for(api, start=True) as runner:
        forward = await received_one(api, runner, dm, "", (), forwarded="Meeting moved to 3pm.\nBring the slides.")
        commented = await received_one(api, runner, dm, "what does this mean?", (), forwarded="LGTM, ship it")
    assert forward.text == "[forwarded message]\n> Meeting moved to 3pm.\n> Bring the slides."
    assert commented.text == "what does this mean?\n\n[forwarded message]\n> LGTM, ship it"
