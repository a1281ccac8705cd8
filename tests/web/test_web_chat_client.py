"""The web platform's client: the delivery core's calls as feed events, files kept for their own chat."""

from __future__ import annotations

import json

from hermes_gateway._core.media import Media
from hermes_gateway._core.platform import MessageRef, Stream
from hermes_gateway._core.platform_context import PlatformContext
from hermes_gateway._core.web.chat_client import WEB_PLATFORM, WebChatClient


def make() -> WebChatClient:
    return WebChatClient(None, PlatformContext("web", receive=lambda incoming: None))


async def test_a_tools_file_becomes_a_link_event_kept_for_its_own_chat(tmp_path):
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4 a report")
    client = make()
    await client.on_media(Stream(WEB_PLATFORM, "w1"), Media(path=str(report), caption="the report"))
    (event,) = [json.loads(e.data) for e in client.feed("w1").events]
    assert event["type"] == "media" and event["kind"] == "document" and event["filename"] == "report.pdf"
    assert event["url"].startswith("/ui/api/chat/files/") and event["caption"] == "the report"
    served = client.files[event["url"].rsplit("/", 1)[1]]
    assert served.chat_id == "w1" and served.path == str(report) and served.mime == "application/pdf"


async def test_previews_and_the_final_text_of_a_message_are_events_of_one_id_in_its_own_chat():
    web = make()
    stream = Stream(WEB_PLATFORM, "w1")
    ref = await web.on_delta(stream, None, "Hel ▌")
    assert await web.on_delta(stream, ref, "Hello ▌") == ref
    assert await web.on_stream_end(stream, ref, "Hello") == ref == MessageRef("w1", ref.message_id)
    events = [json.loads(e.data) for e in web.feed("w1").events]
    assert events == [{"type": "text", "id": ref.message_id, "text": "Hello", "final": True}]  # previews replaced
    assert list(web.feed("w2").events) == []


async def test_tool_progress_is_a_note_like_the_terminals_lines():
    web = make()
    stream = Stream(WEB_PLATFORM, "w1")
    await web.on_tool_progress(stream, "qr_code", done=False)
    await web.on_tool_progress(stream, "qr_code", done=True, ok=True, summary="saved\n  qr.png")
    await web.on_tool_progress(stream, "shell", done=True, ok=False, summary="x" * 500)
    notes = [json.loads(e.data) for e in web.feed("w1").events]
    assert [n["type"] for n in notes] == ["note"] * 3
    assert notes[0]["text"] == "🔧 calling qr_code" and notes[1]["text"] == "✓ qr_code: saved qr.png"
    assert notes[2]["text"].startswith("✗ shell: xxx") and notes[2]["text"].endswith("…")
    assert len(notes[2]["text"]) < 200
