"""A tool's media reaches the Telegram chat as a photo, video, audio or document, after the text, once.

Through python-telegram-bot and the Bot API emulator (which keeps each
upload's bytes and file name and shows it on the chat's screen as
``[photo: qr.png] caption``).
"""

from __future__ import annotations

import logging

import aiohttp
import pytest

from hermes_gateway import Media, utf16_length
from hermes_gateway.testing import TestGateway
from hermes_telegram import plugin
from hermes_telegram.emulator_media import image_size
from hermes_telegram.media import LIMITS, method_for
from telegram_test_support import FAST_LIMITS, SETTINGS, TOKEN, config, eventually, fast_runner

#: What the demo model says after `tool: qr_code {"text": "hello"}`: the tool's text and its stand-in.
QR_REPLY = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
PNG_1x1 = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                        "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082")


def png_header(width: int, height: int) -> bytes:
    """The start of a PNG of that size: enough for Telegram's (and the emulator's) dimension check."""
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
            + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + b"\x00" * 64)


def gateway_for(api, tmp_path) -> TestGateway:
    """The whole gateway (the demo model's qr_code tool included) with a media directory of the test's own."""
    return TestGateway({**config(api.base_url), "media": {"directory": str(tmp_path / "media")}}, plugin,
                       limits=FAST_LIMITS, shutdown_grace=0.5)


def delivery_with_media(tg, tmp_path):
    return tg.delivery({"media": {"directory": str(tmp_path / "media")}})


def media_file(tmp_path, name: str, data: bytes = b"", size: int | None = None) -> str:
    """A file inside the media directory (sparse when ``size`` is given)."""
    directory = tmp_path / "media"
    directory.mkdir(exist_ok=True)
    path = directory / name
    with open(path, "wb") as out:
        out.write(data)
        if size is not None:
            out.truncate(size)
    return str(path)


async def ask_for_a_qr_code(api, tmp_path, chat_id: int, upload_timeout: float | None = None) -> None:
    async with gateway_for(api, tmp_path) as gateway:
        if upload_timeout is not None:
            gateway.client("telegram").upload_timeout = upload_timeout
        await api.push_message(chat_id, 'tool: qr_code {"text": "hello"}')
        await eventually(lambda: len(api.screen(chat_id)) == 2, lambda: api.chat(chat_id).calls)


# -- through the gateway: the demo model's qr_code tool ------------------------------------------------------

async def test_the_qr_code_shows_as_a_photo_after_the_reply_text(api, tmp_path):
    await ask_for_a_qr_code(api, tmp_path, 41)
    chat = api.chat(41)
    assert chat.screen == [QR_REPLY, "[photo: qr.png] hello"]
    [photo] = chat.uploads
    assert photo.data.startswith(b"\x89PNG") and image_size(photo.data)[0] > 1, "a real QR code, as uploaded"
    assert [c.method for c in chat.calls if c.method.startswith("sendPhoto")] == ["sendPhoto"]
    assert not chat.violations


async def test_the_qr_code_after_a_429_on_the_upload_is_shown_once(api, tmp_path):
    api.uploads.rate_limit_next(42, 1)
    await ask_for_a_qr_code(api, tmp_path, 42)
    chat = api.chat(42)
    assert chat.screen == [QR_REPLY, "[photo: qr.png] hello"]
    assert [c.outcome for c in chat.calls if c.method == "sendPhoto"] == ["rate_limited", "ok"]
    assert not chat.violations, "the second upload came before retry_after had passed"


async def test_the_qr_code_after_a_timeout_that_landed_is_not_sent_again(api, tmp_path, caplog):
    api.uploads.stall(43, 1.0, landed=True)
    with caplog.at_level(logging.INFO, logger="hermes_gateway"):
        await ask_for_a_qr_code(api, tmp_path, 43, upload_timeout=0.3)
    chat = api.chat(43)
    assert chat.screen == [QR_REPLY, "[photo: qr.png] hello"]
    assert [c.method for c in chat.calls].count("sendPhoto") == 1, "a timeout after the upload: never again"
    assert "may have been sent" in caplog.text


# -- through the delivery core: one item at a time ----------------------------------------------------------

async def test_a_timeout_that_did_not_land_leaves_nothing_and_says_so(api, tmp_path):
    tg = fast_runner(api.base_url)
    tg.client.upload_timeout = 0.3
    api.uploads.stall(44, 1.0, landed=False)
    report = await delivery_with_media(tg, tmp_path).session("telegram", "44", settings=SETTINGS).finish(
        "A picture:", [Media(data=PNG_1x1, filename="dot.png")])
    await tg.client.close()
    assert api.screen(44) == ["A picture:"], "maybe delivered: no second upload, no fallback line"
    assert report.media_uncertain == 1


async def test_an_image_over_the_photo_limit_goes_as_a_document(api, tmp_path):
    tg = fast_runner(api.base_url)
    big = media_file(tmp_path, "chart.png", png_header(800, 600), size=LIMITS.max_bytes["image"] + 1)
    report = await delivery_with_media(tg, tmp_path).session("telegram", "45", settings=SETTINGS).finish(
        "Here:", [Media(path=big, caption="The chart")])
    await tg.client.close()
    chat = api.chat(45)
    assert chat.screen == ["Here:", "[document: chart.png] The chart"]
    assert len(chat.uploads[0].data) == LIMITS.max_bytes["image"] + 1 and len(report.media) == 1
    assert "sendPhoto" not in [c.method for c in chat.calls]


async def test_an_item_over_every_limit_is_a_line_in_the_text_and_never_uploaded(api, tmp_path):
    tg = fast_runner(api.base_url)
    big = media_file(tmp_path, "dump.zip", size=LIMITS.max_bytes["default"] + 1)
    report = await delivery_with_media(tg, tmp_path).session("telegram", "46", settings=SETTINGS).finish(
        "The export:", [Media(path=big, caption="All rows")])
    await tg.client.close()
    assert api.screen(46) == ["The export:\n\n📎 dump.zip — All rows (too large for telegram)"]
    assert api.chat(46).uploads == [] and report.media_notes == ["📎 dump.zip — All rows (too large for telegram)"]


async def test_a_413_from_the_bot_api_is_final_the_line_follows_and_nothing_is_retried(api, tmp_path):
    """A server with a lower limit (a proxy, a changed Bot API): nginx's HTML 413 is not worth retrying."""
    tg = fast_runner(api.base_url)
    api.uploads.max_upload_bytes = 4096
    path = media_file(tmp_path, "notes.txt", b"x" * 10_000)
    report = await delivery_with_media(tg, tmp_path).session("telegram", "47", settings=SETTINGS).finish(
        "Notes:", [Media(path=path, caption="Meeting notes")])
    await tg.client.close()
    assert api.screen(47) == ["Notes:", "📎 notes.txt — Meeting notes (could not be sent)"]
    assert report.media_notes == ["📎 notes.txt — Meeting notes (could not be sent)"]
    assert [m for m, _ in api.requests].count("sendDocument") == 1


async def test_a_url_is_shown_as_its_link(api, tmp_path):
    """Telegram could fetch URLs itself, but the plugin does not declare it: the person gets the link."""
    tg = fast_runner(api.base_url)
    await delivery_with_media(tg, tmp_path).session("telegram", "48", settings=SETTINGS).finish(
        "See:", [Media(url="https://example.com/report.pdf", caption="The report")])
    await tg.client.close()
    assert api.screen(48) == ["See:\n\n🔗 The report: https://example.com/report.pdf"]
    assert api.chat(48).uploads == []


async def test_a_photo_telegram_refuses_as_a_photo_arrives_as_a_file(api, tmp_path):
    """Width + height over 10000 (a long screenshot): PHOTO_INVALID_DIMENSIONS, then sendDocument."""
    tg = fast_runner(api.base_url)
    tall = png_header(1000, 12000)
    await delivery_with_media(tg, tmp_path).session("telegram", "49", settings=SETTINGS).finish(
        "The page:", [Media(data=tall, filename="page.png", caption="Full page")])
    await tg.client.close()
    chat = api.chat(49)
    assert chat.screen == ["The page:", "[document: page.png] Full page"]
    assert chat.uploads[0].data == tall
    assert [(c.method, c.outcome) for c in chat.calls if c.method != "sendMessage"] == [
        ("sendPhoto", "Bad Request: PHOTO_INVALID_DIMENSIONS"), ("sendDocument", "ok")]


async def test_each_kind_goes_by_its_own_method_in_order(api, tmp_path):
    tg = fast_runner(api.base_url)
    items = [Media(data=PNG_1x1, filename="a.png"), Media(data=b"\x00" * 64, filename="b.mp4"),
             Media(data=b"ID3" + b"\x00" * 61, filename="c.mp3"), Media(data=b"\x1aE" * 32, filename="d.webm"),
             Media(data=b"%PDF-1.4", filename="e.pdf", caption="The PDF")]
    report = await delivery_with_media(tg, tmp_path).session("telegram", "50", settings=SETTINGS).finish(
        "Five files:", items)
    await tg.client.close()
    assert api.screen(50) == ["Five files:", "[photo: a.png]", "[video: b.mp4]", "[audio: c.mp3]",
                              "[document: d.webm]", "[document: e.pdf] The PDF"]
    assert [(name, data) for name, data in ((u.filename, u.data) for u in api.chat(50).uploads)] == [
        (m.filename, m.data) for m in items]
    assert [r.message_id for r in report.media] == [m.id for m in api.chat(50).messages[1:]]


async def test_a_long_caption_is_cut_to_1024_utf16_units(api, tmp_path):
    tg = fast_runner(api.base_url)
    caption = "🙂" * 600  # 1200 UTF-16 units
    await delivery_with_media(tg, tmp_path).session("telegram", "51", settings=SETTINGS).finish(
        "", [Media(data=PNG_1x1, filename="smile.png", caption=caption)])
    await tg.client.close()
    [photo] = api.chat(51).uploads
    assert photo.caption.endswith("…") and utf16_length(photo.caption) <= 1024
    assert caption.startswith(photo.caption[:-1]) and not api.chat(51).violations


async def test_in_a_forum_topic_the_file_goes_to_the_topic(api, tmp_path):
    tg = fast_runner(api.base_url)
    session = delivery_with_media(tg, tmp_path).session("telegram", "-100777", thread_id="12",
                                                            settings=SETTINGS)
    await session.finish("In the topic:", [Media(data=PNG_1x1, filename="t.png")])
    await tg.client.close()
    assert api.chat(-100777).screen_in_thread("12") == ["In the topic:", "[photo: t.png]"]


# -- the emulator is as strict as the Bot API ---------------------------------------------------------------

@pytest.mark.parametrize("method,field,data,answer", [
    ("sendDocument", "file", b"abc", (400, "Bad Request: there is no document in the request")),
    ("sendPhoto", "photo", b"not an image", (400, "Bad Request: IMAGE_PROCESS_FAILED")),
    ("sendDocument", "document", b"", (400, "Bad Request: file must be non-empty")),
])
async def test_the_emulator_refuses_uploads_as_telegram_does(api, method, field, data, answer):
    form = aiohttp.FormData()
    form.add_field("chat_id", "60")
    form.add_field(field, data, filename="x.bin", content_type="application/octet-stream")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{api.base_url}{TOKEN}/{method}", data=form) as resp:
            body = await resp.json()
    assert (resp.status, body["description"]) == answer and api.chat(60).uploads == []


async def test_the_emulator_answers_an_oversized_body_like_nginx(api):
    api.uploads.max_upload_bytes = 100
    form = aiohttp.FormData()
    form.add_field("chat_id", "61")
    form.add_field("document", b"x" * 500, filename="big.bin")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{api.base_url}{TOKEN}/sendDocument", data=form) as resp:
            text = await resp.text()
    assert resp.status == 413 and "<title>413 Request Entity Too Large</title>" in text
    assert api.chat(61).uploads == []


def test_the_method_follows_what_telegram_plays():
    assert method_for(Media(data=b"x", filename="a.jpg")) == "sendPhoto"
    assert method_for(Media(data=b"x", filename="a.png", kind="document")) == "sendDocument"
    assert method_for(Media(data=b"x", filename="a.mp4")) == "sendVideo"
    assert method_for(Media(data=b"x", filename="a.mov")) == "sendDocument"
    assert method_for(Media(data=b"x", filename="a.m4a")) in ("sendAudio",)
    assert method_for(Media(data=b"x", filename="a.ogg")) == "sendDocument"


def test_a_timeout_while_writing_the_upload_did_not_land_but_one_while_waiting_may_have():
    import httpx
    from telegram import error as tg

    from hermes_telegram.errors import translate
    from hermes_telegram.media import _upload_error

    writing = tg.TimedOut()
    writing.__cause__ = httpx.WriteTimeout("timed out")
    error = _upload_error(writing, "sendDocument")
    assert error is not None and error.retryable and not error.maybe_delivered
    waiting = tg.TimedOut()
    waiting.__cause__ = httpx.ReadTimeout("timed out")
    assert _upload_error(waiting, "sendDocument") is None, "the usual translation applies"
    assert translate(waiting, "sendDocument").maybe_delivered
    too_large = tg.NetworkError("Request Entity Too Large (413). Parsing the server response b'<html>' failed")
    assert not _upload_error(too_large, "sendDocument").retryable
    assert _upload_error(tg.NetworkError("Bad Gateway"), "sendDocument") is None, "a 502 stays retryable"


# -- voice replies: voice.reply sends the final text as a voice note (sendVoice) -------------------------------

async def test_a_voice_reply_arrives_as_a_voice_note_that_decodes(api, tmp_path):
    """``voice.reply: always``: the text streams as usual, then a voice note (OGG/Opus, sendVoice) follows it."""
    av = pytest.importorskip("av", reason="PyAV decodes the voice note")

    data = {**config(api.base_url), "media": {"directory": str(tmp_path / "media")}, "voice": {"reply": "always"}}
    try:
        gateway = TestGateway(data, plugin, limits=FAST_LIMITS, shutdown_grace=0.5)
    except Exception as exc:  # no built-in speech engine on this machine and no endpoint: a config error
        pytest.skip(f"no speech engine: {exc}")
    async with gateway:
        await api.push_message(47, "echo: the kettle is on")
        await eventually(lambda: len(api.chat(47).uploads) == 1, lambda: api.chat(47).calls, timeout=60)
    chat = api.chat(47)
    assert chat.screen[0] == "the kettle is on", "the text comes first, as usual"
    [voice] = chat.uploads
    assert voice.kind == "voice" and voice.mime in ("audio/ogg", "audio/opus"), voice
    assert [c.method for c in chat.calls if c.method.startswith("send")][-1] == "sendVoice"
    import io

    with av.open(io.BytesIO(voice.data)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        samples = sum(frame.samples for frame in container.decode(stream))
    assert samples > 4800, "a voice note with sound in it, not an empty file"
