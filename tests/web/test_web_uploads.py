"""Files from the browser (``POST /ui/api/chat/upload``): into the turn like a Telegram photo, refused in 4xx."""

from __future__ import annotations

import aiohttp
import pytest

from files_helpers import image_bytes, pdf_bytes
from hermes_gateway._core.web.uploads import kind_of
from hermes_gateway.testing.audio import AudioApiServer, voice_note
from web_helpers import browser_session, config, csrf_of, open_feed, running


def form(text: str | None = None, *files: tuple[str, str, bytes, str]) -> aiohttp.FormData:
    """A multipart form as the page builds it: ``text``, then (field, name, bytes, mime) per file."""
    data = aiohttp.FormData(default_to_multipart=True)  # as a browser sends any FormData
    if text is not None:
        data.add_field("text", text)
    for field, name, body, mime in files:
        data.add_field(field, body, filename=name, content_type=mime)
    return data


async def upload(session, url: str, data, csrf: str | None, headers: dict | None = None) -> tuple[int, dict]:
    headers = headers or ({"X-CSRF-Token": csrf} if csrf else {})
    async with session.post(f"{url}/ui/api/chat/upload", data=data, headers=headers) as r:
        try:
            body = await r.json(content_type=None)
        except ValueError:
            body = {"raw": await r.text()}
        return r.status, body


async def reply_to(tmp_path, data, **sections) -> tuple[list[str], dict]:
    """Upload ``data`` into a fresh web chat; the final texts of the reply, and the upload's answer."""
    async with running(config(media={"directory": str(tmp_path)}, **sections)) as gateway, \
            browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        status, body = await upload(browser, url, data, csrf)
        assert status == 202, body
        events = await feed.until(lambda ev: ev and ev[-1]["type"] == "idle")
        feed.close()
        return [e["text"] for e in events if e["type"] == "text" and e["final"]], body


def test_the_kind_comes_from_the_field_the_mime_type_or_the_name():
    assert kind_of("file", "image/png", "a.png") == "image"
    assert kind_of("file", "", "photo.JPG") == "image"
    assert kind_of("file", "application/octet-stream", "memo.pdf") == "document"
    assert kind_of("file", "image/svg+xml", "logo.svg") == "document"  # text to read, not pixels
    assert kind_of("file", "audio/ogg", "a.ogg") == "audio"
    assert kind_of("voice", "audio/webm", "note.webm") == "voice"
    assert kind_of("file", "", "no-extension") == "document"


async def test_an_image_reaches_the_model_which_describes_it(tmp_path):
    texts, body = await reply_to(tmp_path, form("describe", ("file", "red.png", image_bytes(40, 30), "image/png")))
    assert body["files"] == [{"name": "red.png", "kind": "image", "size": len(image_bytes(40, 30))}]
    assert texts == ["I see a PNG image of 40x30 pixels."]


async def test_a_pdf_and_a_text_document_are_read_as_their_text(tmp_path):
    texts, _ = await reply_to(tmp_path, form(
        None, ("file", "memo.pdf", pdf_bytes("Lunch moved to Thursday"), "application/pdf"),
        ("file", "notes.txt", b"Buy milk and bread before noon", "text/plain")))
    (reply,) = texts
    assert '"Lunch moved to Thursday"' in reply and "memo.pdf" in reply, reply
    assert '"Buy milk and bread before noon"' in reply and "notes.txt" in reply, reply


async def test_a_voice_note_is_transcribed(tmp_path):
    note = voice_note(1.0)
    async with AudioApiServer() as audio:
        audio.hears(note, "remind me to call Ada")
        texts, body = await reply_to(tmp_path, form(None, ("voice", "note.wav", note, "audio/wav")),
                                     voice={"transcription": {"base_url": audio.base_url, "model": "whisper-1"}})
    assert body["files"][0]["kind"] == "voice"
    assert texts == ['I heard: "remind me to call Ada".']


async def test_a_bad_file_costs_one_line_and_the_message_is_still_answered(tmp_path):
    texts, _ = await reply_to(tmp_path, form("echo: still here", ("file", "broken.png", b"not a png at all",
                                                                   "image/png")))
    (reply,) = texts
    assert "still here" in reply and "broken.png" in reply, reply


@pytest.mark.parametrize("case", ["oversized", "oversized-undeclared", "not-multipart", "json", "no-csrf",
                                  "unknown-field", "garbage", "too-many", "empty", "text-too-long", "two-texts"])
async def test_hostile_uploads_are_refused_in_4xx_and_nothing_is_sent(tmp_path, case):
    limits = {"media": {"directory": str(tmp_path), "inbound_max_bytes": {"image": "1 KB", "document": "2 KB"}}}
    async with running(config(**limits)) as gateway, browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        big = image_bytes(200, 200, color=(1, 2, 3)) + b"\0" * 2048
        if case == "oversized":
            status, body = await upload(browser, url, form("x", ("file", "big.png", big, "image/png")), csrf)
            expected = 413
            assert "big.png" in body["error"]["message"] and "1 KB" in body["error"]["message"]
        elif case == "oversized-undeclared":  # chunked: no Content-Length to refuse early, cut while streaming

            async def chunks():
                boundary = b"--b0undary"
                yield boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n' \
                    b"Content-Type: text/plain\r\n\r\n"
                for _ in range(64):
                    yield b"a" * 1024
                yield b"\r\n" + boundary + b"--\r\n"

            status, body = await upload(browser, url, chunks(), csrf,
                                        headers={"X-CSRF-Token": csrf,
                                                 "Content-Type": "multipart/form-data; boundary=b0undary"})
            expected = 413
        elif case == "not-multipart":
            status, body = await upload(browser, url, b"\x89PNG...", csrf, headers={
                "X-CSRF-Token": csrf, "Content-Type": "image/png"})
            expected = 415
        elif case == "json":
            async with browser.post(f"{url}/ui/api/chat/upload", json={"text": "hi"},
                                    headers={"X-CSRF-Token": csrf}) as r:
                status, body = r.status, await r.json()
            expected = 415
        elif case == "no-csrf":
            status, body = await upload(browser, url, form("x", ("file", "a.txt", b"hello", "text/plain")), None)
            expected = 403
        elif case == "unknown-field":
            data = aiohttp.FormData(default_to_multipart=True)
            data.add_field("path", "/etc/passwd")
            status, body = await upload(browser, url, data, csrf)
            expected = 400
        elif case == "garbage":
            status, body = await upload(browser, url, b"--nope\r\n\r\n\r\n--", csrf, headers={
                "X-CSRF-Token": csrf, "Content-Type": "multipart/form-data; boundary=b0undary"})
            expected = 400
        elif case == "too-many":
            files = [("file", f"f{i}.txt", b"x", "text/plain") for i in range(11)]
            status, body = await upload(browser, url, form(None, *files), csrf)
            expected = 413
        elif case == "empty":
            status, body = await upload(browser, url, form("   "), csrf)
            expected = 400
        elif case == "two-texts":  # an endless run of text fields would never end the request
            data = form("one")
            data.add_field("text", "two")
            status, body = await upload(browser, url, data, csrf)
            expected = 400
        else:
            status, body = await upload(browser, url, form("x" * 200_000), csrf)
            expected = 413
        assert status == expected, (case, status, body)
        assert body["error"]["message"], body
        await feed.until(lambda ev: True)
        feed.close()
        assert not [e for e in feed.events if e["type"] in ("busy", "text")], feed.events  # nothing was sent
        async with browser.get(f"{url}/ui/api/chat/history") as r:
            assert (await r.json())["messages"] == []


async def test_after_a_reload_the_persons_message_shows_its_files_not_a_documents_text(tmp_path):
    photo = image_bytes(40, 30)
    async with running(config(media={"directory": str(tmp_path)})) as gateway, browser_session() as browser, \
            browser_session() as other:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        data = form("look at these", ("file", "red.png", photo, "image/png"),
                    ("file", "notes.txt", b"Buy milk and bread before noon", "text/plain"))
        assert (await upload(browser, url, data, csrf))[0] == 202
        await feed.until(lambda ev: ev and ev[-1]["type"] == "idle")
        feed.close()
        async with browser.get(f"{url}/ui/api/chat/history") as r:
            mine = (await r.json())["messages"][0]
        assert mine["role"] == "user" and mine["text"] == "look at these"
        image, document = mine["files"]
        assert image["name"] == "red.png" and image["kind"] == "image" and image["url"].startswith("/ui/api/chat/")
        assert document["url"] is None and "notes.txt" in document["label"] and "milk" not in document["label"]
        async with browser.get(f"{url}{image['url']}") as r:
            assert r.status == 200 and r.headers["Content-Type"] == "image/png"
            assert (await r.read())[:8] == b"\x89PNG\r\n\x1a\n"
        await csrf_of(other, url)
        async with other.get(f"{url}{image['url']}") as r:
            assert r.status == 404  # another session never gets this chat's files
