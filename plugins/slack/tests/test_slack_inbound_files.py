"""Files people share on Slack reach the core as Attachments, and their bytes stream from ``url_private``.

Through slack-bolt over Socket Mode: the emulator pushes a ``file_share``
message, the plugin hands the core an ``Incoming`` (``runner.received``),
and the test fetches each attachment as the core would, comparing the bytes
with what the emulator served and its download log with what was asked.
"""

from __future__ import annotations

import pytest

from hermes_gateway import FetchError
from hermes_gateway.testing import samples
from hermes_slack.emulator import BOT_TOKEN
from hermes_slack.emulator_files import PersonFile, pdf, photo, too_large, voice_note
from slack_test_support import eventually, gateway, runner


async def fetched(attachment) -> bytes:
    """What the core would get: every chunk of ``attachment.fetch()``, joined."""
    return b"".join([chunk async for chunk in attachment.fetch()])


async def received_one(api, run, channel, text, files, **kw):
    """Push one message sharing ``files``; the Incoming the plugin handed the core for it."""
    before = len(run.received)
    await api.push_message(channel, text, files=files, **kw)
    await eventually(lambda: len(run.received) > before, lambda: run.received)
    return run.received[-1]


async def test_a_photo_with_a_comment_arrives_as_an_image_attachment_fetched_with_the_bot_token(api):
    picture = photo(64, 48)
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "what is in this picture?", (picture,), kind="im")
        assert api.shared.downloads == [], "nothing is downloaded before the core asks"
        [attachment] = incoming.attachments
        assert incoming.text == "what is in this picture?" and incoming.thread_id == incoming.message_id
        assert (attachment.kind, attachment.mime, attachment.size, attachment.filename) == \
            ("image", "image/png", len(picture.data), "photo.png")
        assert await fetched(attachment) == picture.data
    [download] = api.shared.downloads
    assert (download.filename, download.status, download.authorized, download.sent) == \
        ("photo.png", 200, True, len(picture.data))


async def test_a_mentioned_pdf_and_an_audio_clip_keep_their_kinds_and_bytes(api):
    document, clip = pdf("Quarterly numbers"), voice_note(1.0)
    async with runner(api, start=True) as run:
        await api.wait_connected()
        in_channel = await received_one(api, run, "C0TEAM", "<@U0BOT>", (document,), kind="channel")
        in_dm = await received_one(api, run, "D0DM", "", (clip,), kind="im")
        await eventually(lambda: len(api.deliveries) == 3, lambda: api.deliveries)  # message + app_mention + DM
        assert len(run.received) == 2, "the message and its app_mention are one Incoming"
        assert in_channel.text == "" and in_channel.mentioned and in_dm.text == ""
        [paper] = in_channel.attachments
        [note] = in_dm.attachments
        assert (paper.kind, paper.mime, paper.filename) == ("document", "application/pdf", "report.pdf")
        assert (note.kind, note.mime, note.filename, note.size) == \
            ("voice", "audio/ogg", "audio_message.ogg", len(clip.data))
        assert await fetched(paper) == document.data
        body = await fetched(note)
    assert body == clip.data and body.startswith(b"OggS") and b"OpusHead" in body
    assert [d.filename for d in api.shared.downloaded()] == ["report.pdf", "audio_message.ogg"]


async def test_a_large_file_streams_in_chunks_never_one_piece(api):
    big = PersonFile("big.bin", bytes(range(256)) * 4096 * 3)  # 3 MiB
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "keep this", (big,), kind="im")
        chunks = [chunk async for chunk in incoming.attachments[0].fetch()]
    assert b"".join(chunks) == big.data
    assert len(chunks) > 1 and max(map(len, chunks)) <= 64 * 1024


async def test_a_too_large_file_declares_its_size_and_downloads_nothing_until_asked(api):
    """The core refuses it by its declared size, before asking for a byte (its limit, not the plugin's)."""
    huge = too_large()
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "here is the video", (huge,), kind="im")
    [attachment] = incoming.attachments
    assert (attachment.kind, attachment.size, attachment.mime) == ("video", huge.size, "video/mp4")
    assert api.shared.downloads == []


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_more_bytes_than_slack_declared_is_a_fetch_error(api, chunked):
    """Declared 1000 bytes, served 200 000: refused at the Content-Length, or cut off once past the size."""
    liar = PersonFile("small.png", samples.png(400, 300) + bytes(200_000), "image/png", declared_size=1000,
                      chunked=chunked)
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "look", (liar,), kind="im")
        got = bytearray()
        with pytest.raises(FetchError, match="small.png") as caught:
            async for chunk in incoming.attachments[0].fetch():
                got += chunk
    assert len(got) <= 1000, "never more than declared reaches the core"
    assert "1000" in str(caught.value)


async def test_without_files_read_slack_answers_its_sign_in_page_which_is_a_fetch_error_not_the_file(api):
    api.shared.files_read = False
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "", (pdf(),), kind="im")
        with pytest.raises(FetchError) as caught:
            await fetched(incoming.attachments[0])
    message = str(caught.value)
    assert "report.pdf" in message and "files:read" in message and BOT_TOKEN not in message
    assert [(d.status, d.authorized, d.sent) for d in api.shared.downloads] == [(200, False, 0)]


async def test_a_deleted_file_is_a_fetch_error_naming_it(api):
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "", (pdf(),), kind="im")
        [file_id] = api.shared.posted
        api.shared.delete(file_id)
        with pytest.raises(FetchError, match=r"report\.pdf.*404"):
            await fetched(incoming.attachments[0])


async def test_the_bot_token_never_goes_to_a_host_that_is_not_slacks(api):
    """A file URL elsewhere (an external file's, a forged event's) is refused before any request."""
    async with runner(api, start=True) as run:
        downloads = run.client.downloads
        assert downloads.may_carry_token("https://files.slack.com/files-pri/T1-F1/a.png")
        assert downloads.may_carry_token(f"http://127.0.0.1:{api.port}/files-pri/T1-F1/a.png"), "api_base_url's host"
        for url in ("https://evil.example/files-pri/a.png", "https://files.slack.com.evil.example/a.png",
                    "http://files.slack.com/files-pri/a.png", "file:///etc/passwd"):
            assert not downloads.may_carry_token(url), url
        with pytest.raises(FetchError, match="not on a Slack file host"):
            async for _ in downloads.stream("https://evil.example/x.png", filename="x.png", size=10, mime=None):
                pass


async def test_a_held_back_slack_connect_file_is_looked_up_with_files_info(api):
    shared = PersonFile("connect.pdf", samples.pdf("From another org"), "application/pdf", held_back=True)
    async with runner(api, start=True) as run:
        await api.wait_connected()
        incoming = await received_one(api, run, "D0DM", "from our partner", (shared,), kind="im")
        [attachment] = incoming.attachments
        assert (attachment.kind, attachment.filename, attachment.size) == ("document", "connect.pdf", len(shared.data))
        assert api.shared.downloads == [] and len(api.calls_to("files.info")) == 1
        assert await fetched(attachment) == shared.data


async def test_a_download_that_goes_quiet_is_a_fetch_error(api):
    slow = PersonFile("slow.bin", bytes(200_000), stall=1.5)
    async with runner(api, start=True) as run:
        await api.wait_connected()
        run.client.downloads.read_timeout = 0.2
        incoming = await received_one(api, run, "D0DM", "slow", (slow,), kind="im")
        with pytest.raises(FetchError, match="slow.bin.*could not be downloaded"):
            await fetched(incoming.attachments[0])


async def test_files_from_bots_are_handed_on_marked_from_bot_and_not_downloaded(api):
    """The core decides about another bot's message (``groups.bots``, issue 38); the plugin downloads nothing."""
    async with runner(api, start=True) as run:
        await api.wait_connected()
        api.channel("D0DM", "im")
        await api.push_event({"type": "message", "subtype": "file_share", "channel": "D0DM", "user": "U0OTHER",
                              "bot_id": "B0OTHER", "text": "", "ts": "1800000999.000002", "channel_type": "im",
                              "files": [api.shared.add(photo(), "U0OTHER")]})
        await api.push_message("D0DM", "echo: last", kind="im")
        await eventually(lambda: len(run.received) >= 2, lambda: run.received)
    assert [(i.text, len(i.attachments), i.from_bot) for i in run.received] == [("", 1, True),
                                                                                ("echo: last", 0, False)]
    assert api.shared.downloads == []


async def test_a_photo_is_seen_by_the_model_and_dropped_messages_download_nothing(api):
    """Kept: the photo is downloaded once and described. Not addressed, not allowed, a redelivery, or over
    the size limit: nothing is downloaded (the emulator's log), and the person still gets a line."""
    async with gateway(api, allowed_users=["U0ALICE"]):
        await api.wait_connected()
        await api.push_message("C0TEAM", "what is this?", files=(photo(name="unaddressed.png"),), kind="channel")
        await api.push_message("D0DM", "what is this?", files=(photo(name="stranger.png"),), kind="im",
                               user="U0MALLORY")
        ts = await api.push_message("D0DM", "what is this?", files=(photo(64, 48),), kind="im")
        event_id = api.deliveries[-1].event_id
        await eventually(lambda: settled(api, "D0DM", ts), lambda: api.screen("D0DM"))
        await api.redeliver(event_id)
        big = await api.push_message("D0DM", "and this one?", files=(too_large(),), kind="im")
        await eventually(lambda: settled(api, "D0DM", big), lambda: api.screen("D0DM"))
    assert "a PNG image of 64x48 pixels" in " ".join(api.screen("D0DM", ts))
    assert "huge.mp4" in " ".join(api.screen("D0DM", big)), "the too-large file gets its line"
    assert [(d.filename, d.status) for d in api.shared.downloads] == [("photo.png", 200)]
    assert api.screen("C0TEAM") == []



async def test_a_pdf_without_words_is_read_into_the_prompt(api):
    async with gateway(api):
        await api.wait_connected()
        ts = await api.push_message("D0DM", "", files=(pdf("Quarterly numbers are up"),), kind="im")
        await eventually(lambda: settled(api, "D0DM", ts), lambda: api.screen("D0DM"))
    reply = " ".join(api.screen("D0DM", ts))
    assert "report.pdf" in reply and "Quarterly numbers are up" in reply
    assert [(d.filename, d.status) for d in api.shared.downloads] == [("report.pdf", 200)]


async def test_three_files_one_corrupt_are_answered_once_with_a_line_about_the_corrupt_one(api):
    broken = PersonFile("broken.png", b"\x89PNG\r\n\x1a\n but not really a picture", "image/png")
    async with gateway(api):
        await api.wait_connected()
        ts = await api.push_message("D0DM", "what are these?", files=(photo(64, 48), broken, pdf("Quarterly numbers")),
                                    kind="im")
        await eventually(lambda: settled(api, "D0DM", ts), lambda: api.screen("D0DM"))
    [reply] = api.screen("D0DM", ts)
    assert "a PNG image of 64x48 pixels" in reply and "Quarterly numbers" in reply and "broken.png" in reply
    assert sorted(d.filename for d in api.shared.downloaded()) == ["broken.png", "photo.png", "report.pdf"]

def settled(api, channel, thread):
    """The thread shows a reply and nothing is still streaming."""
    return bool(api.screen(channel, thread)) and not api.still_streaming()
