"""Attachments on WhatsApp: what the person's phone shows after a reply with media, through the Graph API emulator.

Each test asserts on the phone's screen (the business's messages, an
attachment as ``[image: qr.png] caption``) and on the files the phone
received, bytes included.
"""

from __future__ import annotations

import aiohttp
import pytest

from hermes_gateway import Media
from hermes_gateway.testing import PlatformRunner, builtin_tool
from hermes_whatsapp.errors import PAIR_RATE
from hermes_whatsapp.media import LIMITS, message_type
from whatsapp_test_support import FAST, PHONE_ID, TOKEN, USER, eventually, gateway_for, runner_for, webhook_url

QR_REPLY = "The tool qr_code returned: A QR code for 5 characters of text.\n[image: qr.png attached]"
PNG = builtin_tool("qr_code").function("hello").media[0].data


def quick(meta, **kw) -> PlatformRunner:
    """A client without pacing worth waiting for, whose Graph API calls time out after 1 s (built, not started)."""
    runner = runner_for(meta, limits={"budgets": FAST}, timeout=1.0, **kw)
    runner.build().pairs.first = 0.2
    meta.pair_penalty = 0.2
    return runner


def delivery(runner: PlatformRunner, media_dir):
    media_dir.mkdir(exist_ok=True)
    return runner.delivery({"media": {"directory": str(media_dir)}})


def file_in(media_dir, name: str, data: bytes = b"", size: int | None = None) -> str:
    media_dir.mkdir(exist_ok=True)
    path = media_dir / name
    with open(path, "wb") as out:
        out.write(data)
        if size is not None:
            out.truncate(size)  # sparse: nothing written
    return str(path)


# ---------------------------------------------------------------- end to end: the qr_code tool through the gateway

async def ask_for_a_qr_code(meta, **cfg):
    meta.pair_penalty = 0.2
    gateway = gateway_for(meta, limits={"budgets": FAST}, timeout=1.0, **cfg)
    async with gateway:
        gateway.client("whatsapp").pairs.first = 0.2
        payload = meta.text_message(USER, 'tool: qr_code {"text": "hello"}')
        assert await meta.deliver(webhook_url(gateway), payload) == 200
        await eventually(lambda: len(meta.screen(USER)) >= 2, lambda: meta.calls, timeout=30)
    return payload["entry"][0]["changes"][0]["value"]["messages"][0]["id"]


async def test_the_qr_code_arrives_as_an_image_after_the_reply_text(meta):
    question = await ask_for_a_qr_code(meta)
    assert meta.screen(USER) == [QR_REPLY, "[image: qr.png] hello"]
    assert meta.attachments(USER) == [("qr.png", PNG)], "the phone got the PNG, bytes intact"
    phone = meta.user(USER)
    assert [m.quotes for m in phone.messages] == [question, None], "the text quotes the question, the image not"
    assert len(meta.uploads) == 1 and not phone.violations


async def test_the_qr_code_arrives_once_when_whatsapp_says_too_many_messages(meta):
    meta.fail_next(USER, PAIR_RATE, on="media")   # 131056 on the image message
    await ask_for_a_qr_code(meta)
    assert meta.screen(USER) == [QR_REPLY, "[image: qr.png] hello"]
    assert meta.attachments(USER) == [("qr.png", PNG)]
    assert len(meta.uploads) == 1, "the retry reuses the uploaded media id"
    assert not meta.user(USER).violations, "the retry waited for the pair limit"


async def test_the_qr_code_is_not_sent_twice_when_the_answer_to_a_shown_image_is_lost(meta):
    meta.hang_next(USER, 1.5, landed=True)        # shown, but the answer comes after the 1 s timeout
    await ask_for_a_qr_code(meta)
    assert meta.screen(USER) == [QR_REPLY, "[image: qr.png] hello"]
    assert meta.attachments(USER) == [("qr.png", PNG)]
    assert len([c for c in meta.calls if c.body and c.body.get("type") == "image"]) == 1, "never sent again"


async def test_a_lost_upload_answer_is_uploaded_again_and_shown_once(meta, tmp_path):
    meta.fail_upload(131000, status=500, delay=1.5)   # the answer to the upload never comes in time
    runner = quick(meta)
    report = await delivery(runner, tmp_path / "media").session("whatsapp", USER).finish(
        "Your code:", [Media(data=PNG, filename="qr.png", caption="hello")])
    await runner.client.close()
    assert meta.screen(USER) == ["Your code:", "[image: qr.png] hello"]
    assert meta.upload_attempts == 2 and len(meta.uploads) == 1, "the upload whose answer was lost, then again"
    assert report.media_uncertain == 0, "an upload shows nothing: safe to repeat"


# ---------------------------------------------------------------- what goes how

@pytest.mark.parametrize("name, mime, caption, shown", [
    ("photo.jpg", "image/jpeg", "a photo", "[image: photo.jpg] a photo"),
    ("sticker.webp", "image/webp", "", "[document: sticker.webp]"),          # WhatsApp plays JPEG/PNG only
    ("clip.mp4", "video/mp4", "a clip", "[video: clip.mp4] a clip"),
    ("note.ogg", "audio/ogg", "", "[audio: note.ogg]"),
    ("song.mp3", "audio/mpeg", "the words", "[document: song.mp3] the words"),  # audio takes no caption
    ("report.pdf", "application/pdf", "Q3", "[document: report.pdf] Q3"),
])
async def test_each_kind_goes_as_the_message_type_whatsapp_shows_it_as(meta, tmp_path, name, mime, caption, shown):
    runner = quick(meta)
    data = b"\x00\x01" * 500
    report = await delivery(runner, tmp_path / "media").session("whatsapp", USER).finish(
        "", [Media(data=data, filename=name, mime=mime, caption=caption)])
    await runner.client.close()
    assert meta.screen(USER) == [shown]
    assert meta.attachments(USER) == [(name, data)]
    assert len(report.media) == 1 and report.media_notes == []
    assert not meta.user(USER).violations


async def test_an_image_over_5_mb_arrives_as_a_document(meta, tmp_path):
    runner = quick(meta)
    big = file_in(tmp_path / "media", "scan.png", b"\x89PNG", size=6_000_000)
    await delivery(runner, tmp_path / "media").session("whatsapp", USER).finish("The scan:", [Media(path=big)])
    await runner.client.close()
    assert meta.screen(USER) == ["The scan:", "[document: scan.png]"]
    assert [len(data) for _, data in meta.attachments(USER)] == [6_000_000]


async def test_a_file_over_100_mb_is_one_line_after_the_text_and_never_uploaded(meta, tmp_path):
    runner = quick(meta)
    huge = file_in(tmp_path / "media", "dump.pdf", size=100_000_001)
    report = await delivery(runner, tmp_path / "media").session("whatsapp", USER).finish(
        "Here it is.", [Media(path=huge, caption="the dump")])
    await runner.client.close()
    assert meta.screen(USER) == ["Here it is.\n\n📎 dump.pdf — the dump (too large for whatsapp)"]
    assert meta.uploads == [] and meta.attachments(USER) == []
    assert report.media_notes == ["📎 dump.pdf — the dump (too large for whatsapp)"]


async def test_a_format_whatsapp_refuses_is_its_line_and_no_upload(meta, tmp_path):
    runner = quick(meta)
    report = await delivery(runner, tmp_path / "media").session("whatsapp", USER).finish(
        "An animation:", [Media(data=b"GIF89a...", filename="spin.gif", caption="spinning")])
    await runner.client.close()
    assert meta.screen(USER) == ["An animation:", "📎 spin.gif — spinning (could not be sent)"]
    assert meta.uploads == [] and meta.attachments(USER) == []
    assert report.media_notes == ["📎 spin.gif — spinning (could not be sent)"]


def test_the_declared_limits_are_metas():
    assert LIMITS.limit_for("image") == 5_000_000 and LIMITS.limit_for("document") == 100_000_000
    assert LIMITS.limit_for("video") == LIMITS.limit_for("audio") == 16_000_000
    assert LIMITS.caption_length == 1024 and not LIMITS.urls
    assert message_type(Media(data=b"x", filename="a.png")) == "image"
    assert message_type(Media(data=b"x", filename="a.png", kind="document")) == "document"


# ---------------------------------------------------------------- the emulator is as strict as Meta

async def upload(meta, fields: dict[str, str], file: tuple[str, bytes, str] | None):
    form = aiohttp.FormData()
    for key, value in fields.items():
        form.add_field(key, value)
    if file is not None:
        form.add_field("file", file[1], filename=file[0], content_type=file[2])
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.post(f"{meta.base_url}/{PHONE_ID}/media", data=form) as response:
            return response.status, await response.json()


async def send(meta, payload):
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.post(f"{meta.base_url}/{PHONE_ID}/messages", json=payload) as response:
            return response.status, await response.json()


@pytest.mark.parametrize("fields, file, words", [
    ({"type": "image/png"}, ("a.png", b"png", "image/png"), "messaging_product is required"),
    ({"messaging_product": "whatsapp", "type": "image/png"}, None, "file is required"),
    ({"messaging_product": "whatsapp"}, ("a.png", b"png", "image/png"), "type is required"),
    ({"messaging_product": "whatsapp", "type": "application/zip"}, ("a.zip", b"PK", "application/zip"),
     "Received file of type 'application/zip'"),
])
async def test_a_malformed_upload_is_refused_with_error_100(meta, fields, file, words):
    status, body = await upload(meta, fields, file)
    assert status == 400 and body["error"]["code"] == 100 and words in body["error"]["message"], body
    assert meta.uploads == []


async def test_a_media_message_must_fit_its_type(meta):
    status, body = await upload(meta, {"messaging_product": "whatsapp", "type": "application/pdf"},
                                ("r.pdf", b"%PDF", "application/pdf"))
    assert status == 200
    media_id = body["id"]
    base = {"messaging_product": "whatsapp", "to": USER}
    refused = [
        {**base, "type": "image", "image": {"id": media_id}},                              # a PDF is no image
        {**base, "type": "document", "document": {"id": "999"}},                           # not uploaded
        {**base, "type": "document", "document": {"id": media_id, "caption": "x" * 1025}},  # caption too long
        {**base, "type": "audio", "audio": {"id": media_id, "caption": "words"}},            # audio: no caption
    ]
    for payload in refused:
        status, body = await send(meta, payload)
        assert status == 400 and body["error"]["code"] == 100, (payload, body)
    status, body = await send(meta, {**base, "type": "document",
                                     "document": {"id": media_id, "filename": "report.pdf", "caption": "Q3"}})
    assert status == 200 and body["messages"][0]["id"].startswith("wamid.")
    assert meta.screen(USER) == ["[document: report.pdf] Q3"]
    assert meta.attachments(USER) == [("report.pdf", b"%PDF")]
