"""Files from the browser (``POST /ui/api/chat/upload``): into the turn like a Telegram photo, refused in 4xx."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys

import aiohttp
import pytest
import yaml

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
        assert spooled(tmp_path) == [], "a refused upload leaves nothing on disk"
        assert gateway.clients_view("web").uploads.files == {}, "nor in the chat's queue"


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


QR = 'tool: qr_code {"text": "https://example.org"}'
HELD = {"tools": {"approval": {"require": ["qr_code"], "timeout": 60}}}  # a question holds the chat busy


def spooled(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith("-upload.part")) if directory.exists() \
        else []


async def hold_the_chat(browser, url: str, csrf: str, feed) -> str:
    """A reply waiting on an approval button: what is uploaded now waits in the queue. Its Approve payload."""
    async with browser.post(f"{url}/ui/api/chat/send", json={"text": QR}, headers={"X-CSRF-Token": csrf}) as r:
        assert r.status == 202
    events = await feed.until(lambda ev: any(e["type"] == "choice" for e in ev))
    return next(e for e in events if e["type"] == "choice")["options"][0]["payload"]


@pytest.mark.parametrize("bound", ["files", "bytes"])
async def test_the_chats_upload_queue_is_bounded_with_a_429_and_what_is_queued_is_kept(tmp_path, bound):
    """Two files wait behind a busy reply; a third upload passes the chat's bound (media.upload_queue_files: 2,
    or media.upload_queue_bytes: 1 MB with 400 KB files): 429 with a clear message, its bytes not kept; once
    the reply is done both queued files are answered and no spool file is left."""
    media = tmp_path / "media"
    queue = {"upload_queue_files": 2} if bound == "files" else {"upload_queue_bytes": "1 MB"}
    size = 10 if bound == "files" else 400 * 1024
    async with running(config(media={"directory": str(media), **queue}, **HELD)) as gateway, \
            browser_session() as browser:
        url = gateway.url
        csrf = await csrf_of(browser, url)
        feed = await open_feed(browser, url)
        approve = await hold_the_chat(browser, url, csrf, feed)
        for name in ("first.txt", "second.txt"):
            body = f"{name} says hello ".encode().ljust(size, b".")
            status, answer = await upload(browser, url, form(None, ("file", name, body, "text/plain")), csrf)
            assert status == 202, answer
        assert len(spooled(media)) == 2
        status, answer = await upload(browser, url, form(None, ("file", "third.txt", b"x" * size, "text/plain")),
                                      csrf)
        assert status == 429 and answer["error"]["code"] == "queue_full", answer
        waiting = "2 files (1 KB)" if bound == "files" else "2 files (800 KB)"
        limits = "at most 2 files, 200.0 MB" if bound == "files" else "at most 20 files, 1.0 MB"
        assert answer["error"]["message"] == (f"this chat already has {waiting} waiting to be read ({limits}); "
                                              "send more once they are answered")
        assert len(spooled(media)) == 2, "the refused upload left nothing on disk"
        async with browser.post(f"{url}/ui/api/chat/choose", json={"payload": approve},
                                headers={"X-CSRF-Token": csrf}) as r:
            assert r.status == 200
        events = await feed.until(lambda ev: ev[-1]["type"] == "idle" and any(
            e["type"] == "text" and e["final"] and "second.txt says" in e["text"] for e in ev))
        feed.close()
        texts = " ".join(e["text"] for e in events if e["type"] == "text" and e["final"])
        assert "first.txt says hello" in texts and "second.txt says hello" in texts and "third" not in texts
        assert spooled(media) == []
        assert gateway.clients_view("web").uploads.files == {}, "the chat's queue is empty again"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="resident memory is read from /proc")
async def test_twelve_48_mb_uploads_waiting_do_not_grow_the_gateway_by_their_size(tmp_path):
    """`hermes-gateway run`, a chat held busy, twelve 48 MB files uploaded (576 MB): they wait on disk, and the
    gateway's resident memory grows by far less than their size."""
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump({
        "api_server": {"port": 0}, "store": {"path": str(tmp_path / "s.db")}, **HELD,
        "media": {"directory": str(tmp_path / "media"), "inbound_max_bytes": {"document": "50 MB"},
                  "upload_queue_bytes": "1 GB"}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path), HERMES_HOME=str(tmp_path / ".hermes"), HERMES_LOAD_PLUGINS="",
               PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config_file),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path)

    def resident_mb() -> float:
        for line in open(f"/proc/{proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        url = re.search(r"listening on (http://\S+) ", line).group(1)
        payload = b"a line of a large log file\n" * (48 * 1024 * 1024 // 27)
        async with browser_session() as browser:
            csrf = await csrf_of(browser, url)
            feed = await open_feed(browser, url)
            await hold_the_chat(browser, url, csrf, feed)
            before = resident_mb()
            for n in range(12):
                status, body = await upload(browser, url, form(None, ("file", f"log{n}.txt", payload, "text/plain")),
                                            csrf)
                assert status == 202, body
            grown = resident_mb() - before
            feed.close()
        assert grown < 100, f"the gateway grew by {grown:.0f} MB holding 12 x 48 MB of uploads"
        assert len(spooled(tmp_path / "media")) == 12
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
        assert spooled(tmp_path / "media") == [], "stopping drops the queued messages and their spool files"
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
