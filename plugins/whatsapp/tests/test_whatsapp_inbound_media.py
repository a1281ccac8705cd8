"""Files users send reach the core as attachments: image, document, voice note, audio, video, sticker.

Meta posts a signed webhook naming the media id; the test reads the
``Incoming`` the client hands the core, fetches its attachment as the core
would (lookup by id, then the download, both with the token), and compares
the bytes with what the emulator's media server holds. The server logs
every lookup and every download.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import struct
import zlib

import aiohttp
import pytest

from hermes_gateway import FetchError
from hermes_whatsapp import ROUTE
from hermes_gateway.testing.samples import voice_ogg
from hermes_whatsapp.inbound_media import DOWNLOAD_LIMITS
from hermes_whatsapp.notices import NOTICE
from whatsapp_test_support import TOKEN, USER, eventually, gateway_for, runner_for, webhook_url


def png(width: int, height: int) -> bytes:
    """A real PNG of that size (one colour), made without Pillow."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\x30\x60\x90" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PHOTO = png(64, 48)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


async def received(meta, runner, *payloads, count: int | None = None):
    """Deliver each payload to the runner's webhook; the Incoming values the client handed the core."""
    for payload in payloads:
        assert await meta.deliver(runner.url + ROUTE, payload) == 200
    wanted = len(payloads) if count is None else count
    await eventually(lambda: len(runner.received) >= wanted, lambda: runner.received)
    return runner.received


async def fetched(attachment) -> bytes:
    chunks = [chunk async for chunk in attachment.fetch()]
    assert all(isinstance(chunk, bytes) and chunk for chunk in chunks)
    return b"".join(chunks)


def media_id(payload) -> str:
    message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    return message[message["type"]]["id"]


async def test_a_photo_with_a_caption_arrives_with_its_bytes_and_the_caption_as_text(meta):
    async with runner_for(meta, start=True) as runner:
        [incoming] = await received(meta, runner, meta.media_message(USER, "image", PHOTO, caption="what is this?"))
        assert incoming.text == "what is this?" and incoming.notice is None
        [photo] = incoming.attachments
        assert (photo.kind, photo.mime, photo.filename) == ("image", "image/png", "image.png")
        assert meta.files.lookups == [] and meta.files.downloads == [], "nothing is fetched until the core asks"
        assert await fetched(photo) == PHOTO
    assert len(meta.files.lookups) == 1 and len(meta.files.downloaded) == 1


async def test_a_pdf_keeps_its_name_and_caption(meta):
    async with runner_for(meta, start=True) as runner:
        payload = meta.media_message(USER, "document", PDF, caption="please summarise", filename="report.pdf")
        [incoming] = await received(meta, runner, payload)
        assert incoming.text == "please summarise"
        [document] = incoming.attachments
        assert (document.kind, document.mime, document.filename) == ("document", "application/pdf", "report.pdf")
        assert await fetched(document) == PDF


async def test_a_voice_note_is_a_voice_attachment_of_real_ogg_opus(meta):
    voice = voice_ogg(0.5)
    async with runner_for(meta, start=True) as runner:
        [incoming] = await received(meta, runner, meta.media_message(USER, "audio", voice))
        [note] = incoming.attachments
        assert (note.kind, note.mime, note.filename) == ("voice", "audio/ogg", "voice.ogg")
        data = await fetched(note)
    assert data == voice and data.startswith(b"OggS") and b"OpusHead" in data


@pytest.mark.parametrize("kind, extra, want", [
    ("audio", {"voice": False, "mime": "audio/mpeg", "data": b"ID3 an mp3"}, ("audio", "audio/mpeg", "audio.mp3")),
    ("video", {"caption": "watch", "data": b"\0\0\0\x18ftypmp42 a clip"}, ("video", "video/mp4", "video.mp4")),
    ("sticker", {}, ("sticker", "image/webp", "sticker.webp")),
    ("document", {"data": PHOTO, "mime": "image/png", "filename": "scan.png"}, ("image", "image/png", "scan.png")),
], ids=["audio", "video", "sticker", "image_sent_as_a_document"])
async def test_each_media_type_is_mapped(meta, kind, extra, want):
    async with runner_for(meta, start=True) as runner:
        data = extra.pop("data", None)
        [incoming] = await received(meta, runner, meta.media_message(USER, kind, data, **extra))
        [attachment] = incoming.attachments
        assert (attachment.kind, attachment.mime, attachment.filename) == want
        [stored] = meta.files.files.values()
        assert await fetched(attachment) == stored.data


async def test_a_file_streams_in_chunks_never_whole(meta):
    data = os.urandom(1_000_000)
    async with runner_for(meta, start=True) as runner:
        payload = meta.media_message(USER, "document", data, mime="application/octet-stream", filename="noise.bin")
        [incoming] = await received(meta, runner, payload)
        chunks = [chunk async for chunk in incoming.attachments[0].fetch()]
    assert b"".join(chunks) == data
    assert len(chunks) >= 15 and max(map(len, chunks)) <= 64 * 1024


async def test_a_99_mb_document_is_never_held_in_memory_whole(meta):
    """The emulator generates the bytes as it serves them; what the download allocates at its peak is measured."""
    import tracemalloc

    size = DOWNLOAD_LIMITS["document"] - 1024 * 1024
    async with runner_for(meta, start=True) as runner:
        payload = meta.media_message(USER, "document", size=size, mime="application/zip", filename="backup.zip")
        [incoming] = await received(meta, runner, payload)
        total = 0
        tracemalloc.start()
        try:
            async for chunk in incoming.attachments[0].fetch():
                total += len(chunk)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert total == size
    assert peak < 4 * 1024 * 1024, f"{peak / 1_048_576:.1f} MB allocated at once for a {size / 1_048_576:.0f} MB file"


async def test_a_file_larger_than_whatsapp_allows_is_refused_before_the_download(meta):
    too_big = DOWNLOAD_LIMITS["image"] + 1
    async with runner_for(meta, start=True) as runner:
        [incoming] = await received(meta, runner, meta.media_message(USER, "image", size=too_big))
        [photo] = incoming.attachments
        with pytest.raises(FetchError, match="too large: 5.0 MB, and WhatsApp allows at most 5 MB for an image"):
            await fetched(photo)
    assert len(meta.files.lookups) == 1 and meta.files.downloads == [], "looked up, never downloaded"


async def test_a_file_whose_hash_differs_from_the_webhooks_is_one_warning(meta, caplog):
    altered = PDF.replace(b"Catalog", b"Cat4log")
    async with runner_for(meta, start=True) as runner:
        payloads = [meta.media_message(USER, "document", PDF, filename=f"{n}.pdf") for n in ("altered", "intact")]
        [both] = await received(meta, runner, *payloads, count=1)  # sent at once: one message (bursts)
        first, second = both, dataclasses.replace(both, attachments=both.attachments[1:])
        stored = meta.files.files[media_id(payloads[0])]
        meta.files.files[stored.media_id] = dataclasses.replace(stored, data=altered)
        with caplog.at_level(logging.WARNING, logger="hermes_whatsapp"):
            assert await fetched(first.attachments[0]) == altered
            assert await fetched(second.attachments[0]) == PDF
    [line] = [r.getMessage() for r in caplog.records if r.name.startswith("hermes_whatsapp")]
    assert stored.media_id in line and "SHA-256" in line


async def test_a_media_id_whatsapp_no_longer_knows_is_a_fetch_error(meta):
    async with runner_for(meta, start=True) as runner:
        payload = meta.media_message(USER, "image", PHOTO)
        [incoming] = await received(meta, runner, payload)
        del meta.files.files[media_id(payload)]  # expired (Meta keeps media 30 days)
        with pytest.raises(FetchError, match="WhatsApp would not give the file") as caught:
            await fetched(incoming.attachments[0])
    assert TOKEN not in str(caught.value) and meta.files.downloads == []


async def test_an_attachment_is_fetched_at_most_once(meta):
    async with runner_for(meta, start=True) as runner:
        [incoming] = await received(meta, runner, meta.media_message(USER, "image", PHOTO))
        assert await fetched(incoming.attachments[0]) == PHOTO
        with pytest.raises(FetchError, match="already fetched"):
            incoming.attachments[0].fetch()
    assert len(meta.files.downloads) == 1


async def test_the_media_server_hands_files_only_to_the_token(meta):
    payload = meta.media_message(USER, "image", PHOTO)
    answer = meta.files.lookup(media_id(payload))
    async with aiohttp.ClientSession() as http:
        async with http.get(answer["url"]) as response:
            assert response.status == 401
        async with http.get(answer["url"], headers={"Authorization": "Bearer another-token"}) as response:
            assert response.status == 401
        async with http.get(answer["url"], headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 200 and await response.read() == PHOTO
    assert [d.status for d in meta.files.downloads] == [401, 401, 200]


async def test_a_location_or_contact_card_is_one_line_for_the_model_and_what_is_malformed_gets_the_notice(meta):
    """A shared location or contact card got the notice ("I cannot read this kind of message"): the model can use
    them. One without coordinates, and a media message without its id, still get the notice."""
    broken = meta.media_message(USER, "image", PHOTO)
    del broken["entry"][0]["changes"][0]["value"]["messages"][0]["image"]["id"]
    place = meta.media_message(USER, "location")
    place["entry"][0]["changes"][0]["value"]["messages"][0]["location"].update(name="Brandenburger Tor",
                                                                              address="Pariser Platz, Berlin")
    nowhere = meta.media_message(USER, "location")
    nowhere["entry"][0]["changes"][0]["value"]["messages"][0]["location"] = {"latitude": "north", "longitude": 500}
    async with runner_for(meta, start=True) as runner:
        found = await received(meta, runner, meta.media_message(USER, "location"), place,
                               meta.media_message(USER, "contacts"), nowhere, broken)
    assert [(i.text, i.notice, i.attachments) for i in found] == [
        ("[a location: 52.520000, 13.405000]", None, ()),
        ("[a place: Brandenburger Tor, Pariser Platz, Berlin (52.520000, 13.405000)]", None, ()),
        ("[a contact: Grace Hopper, +1 555 0100]", None, ()),
        ("", NOTICE, ()), ("", NOTICE, ())]


async def test_messages_the_core_drops_download_nothing(meta):
    """A redelivered message is fetched at most once (by the core, once it keeps files); a stranger's never."""
    stranger = "447700900123"
    gateway = gateway_for(meta, allowed_users=[int(USER)])
    async with gateway:
        url = webhook_url(gateway)
        mine = meta.media_message(USER, "image", PHOTO, caption="echo: my photo")
        theirs = meta.media_message(stranger, "image", PHOTO, caption="echo: let me in")
        for payload in (mine, mine, theirs):
            assert await meta.deliver(url, payload) == 200
        await eventually(lambda: meta.screen(USER) != [], lambda: meta.calls)  # the photo answered on its own
        assert await meta.deliver(url, meta.text_message(USER, "echo: done")) == 200
        await eventually(lambda: meta.screen(USER)[-1:] == ["done"], lambda: meta.calls)
    assert media_id(theirs) not in meta.files.lookups and meta.screen(stranger) == []
    assert meta.files.lookups.count(media_id(mine)) <= 1 and len(meta.files.downloads) <= 1


async def test_a_photo_with_a_caption_is_seen_by_the_model(meta):
    gateway = gateway_for(meta)
    async with gateway:
        assert await meta.deliver(webhook_url(gateway), meta.media_message(USER, "image", PHOTO,
                                                                           caption="describe: what is this?")) == 200
        await eventually(lambda: meta.screen(USER) != [], lambda: meta.calls, timeout=10)
    assert meta.screen(USER) == ["I see a PNG image of 64x48 pixels."]
    assert len(meta.files.downloaded) == 1
