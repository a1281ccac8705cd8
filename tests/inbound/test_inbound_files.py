"""Files people send, end to end: a chat on the reference platform, the model a recording upstream on 127.0.0.1.

What is asserted is what the upstream was sent (the image bytes after
downscaling, the PDF's text) and what the person sees in the chat (one
reply; one line per file that could not be used), and how often each
attachment was fetched (never, for a message that is dropped).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_gateway import Incoming
from hermes_gateway.testing import ReferencePlatform, TestGateway

from files_helpers import Fetches, image_bytes, image_size, pdf_bytes
from scripted_upstream import ScriptedUpstream, chunk, text_stream

MB = 1024 * 1024


@pytest.fixture
async def upstream():
    async with ScriptedUpstream(default=text_stream("Got ", "it.")) as up:
        yield up


def config(tmp_path: Path, upstream: ScriptedUpstream | None = None, **sections: Any) -> dict[str, Any]:
    model: dict[str, Any] = {"demo": {"tokens_per_second": 0}}
    if upstream is not None:
        model = {"base_url": upstream.url, "name": "test-model", "api_key": "test-key",
                 "timeouts": {"first_token": 10, "stall": 10}}
    data: dict[str, Any] = {"model": model, "platforms": {"reference": {"enabled": True}},
                            "media": {"directory": str(tmp_path / "media")}}
    for name, value in sections.items():
        data[name] = {**data.get(name, {}), **value}
    return data


def user_content(request: Any) -> Any:
    """The content of the last user message the upstream was sent."""
    return [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]


def images_in(content: Any) -> list[bytes]:
    out = []
    for part in content if isinstance(content, list) else ():
        if part.get("type") == "image_url":
            head, _, payload = part["image_url"]["url"].partition(",")
            assert head.startswith("data:image/")
            out.append(base64.b64decode(payload))
    return out


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content)


async def test_a_photo_with_a_caption_reaches_the_model_downscaled(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    photo = fetches.attachment("image", image_bytes(4032, 3024, "JPEG"), filename="IMG_0001.jpg", mime="image/jpeg")
    async with TestGateway(config(tmp_path, upstream), ref):
        await ref.say("1", "what is in this picture?", attachments=[photo])
    content = user_content(upstream.requests[0])
    assert content[0] == {"type": "text", "text": "what is in this picture?\n\n"}
    assert content[1] == {"type": "text", "text": "[image: IMG_0001.jpg (JPEG 1568x1176)]\n"}
    [sent] = images_in(content)
    assert image_size(sent) == ("JPEG", 1568, 1176)
    assert ref.chat("1").screen == ["Got it."]
    assert fetches.calls == ["IMG_0001.jpg"]


async def test_a_pdf_reaches_the_model_as_its_text_with_its_name(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    pdf = fetches.attachment("document", pdf_bytes("Invoice 2041: total due 310 EUR"), filename="invoice.pdf",
                             mime="application/pdf")
    async with TestGateway(config(tmp_path, upstream), ref):
        await ref.say("1", "", attachments=[pdf])  # no caption: the file alone is the message
    content = user_content(upstream.requests[0])
    assert content == "[document: invoice.pdf (PDF, 1 page)]\nInvoice 2041: total due 310 EUR\n[end of invoice.pdf]"
    assert ref.chat("1").screen == ["Got it."]


async def test_three_files_one_corrupt_are_answered_once_with_one_line_about_it(
        tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    files = [fetches.attachment("image", image_bytes(800, 600, "PNG"), filename="chart.png", mime="image/png"),
             fetches.attachment("image", b"\x89PNG\r\n\x1a\n but then garbage", filename="broken.png"),
             fetches.attachment("document", b"name,qty\napples,3\n", filename="stock.csv", mime="text/csv")]
    async with TestGateway(config(tmp_path, upstream), ref):
        await ref.say("1", "compare these", attachments=files)
    assert len(upstream.requests) == 1
    content = user_content(upstream.requests[0])
    [sent] = images_in(content)
    assert image_size(sent) == ("PNG", 800, 600)
    text = text_of(content)
    assert "[document: stock.csv (text)]\nname,qty\napples,3\n\n[end of stock.csv]" in text
    assert "[photo: broken.png: the person sent it, but it could not be used: not an image I can read" in text
    assert ref.chat("1").screen == [
        "📎 broken.png: not an image I can read (corrupt, or not PNG, JPEG, GIF or WebP)\n\nGot it."]
    assert fetches.calls == ["chart.png", "broken.png", "stock.csv"]


async def test_a_file_declared_too_large_is_not_downloaded_and_the_caption_still_answered(
        tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    scan = fetches.attachment("document", b"%PDF-", filename="scan.pdf", size=31 * MB)
    async with TestGateway(config(tmp_path, upstream), ref):
        await ref.say("1", "here is the scan", attachments=[scan])
    assert fetches.calls == []
    text = text_of(user_content(upstream.requests[0]))
    assert text.startswith("here is the scan")
    assert ref.chat("1").screen == ["📎 scan.pdf: too large (31 MB; the limit is 20 MB)\n\nGot it."]
    assert not any((tmp_path / "media").glob("*scan*"))


async def test_the_limit_per_kind_is_configurable(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    photo = fetches.attachment("image", image_bytes(300, 300, "PNG"), filename="p.png", declare_size=False)
    async with TestGateway(config(tmp_path, upstream, media={"inbound_max_bytes": {"image": 100}}), ref):
        await ref.say("1", "hi", attachments=[photo])
    assert ref.chat("1").screen == ["📎 p.png: too large (over the limit of 100 bytes)\n\nGot it."]
    assert images_in(user_content(upstream.requests[0])) == []


async def test_dropped_messages_fetch_nothing(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    sections = {"platforms": {"reference": {"enabled": True, "allowed_users": ["alice"], "require_mention": True}}}

    def photo() -> Any:
        return fetches.attachment("image", image_bytes(50, 50), filename="p.png")

    async with TestGateway(config(tmp_path, upstream, **sections), ref) as gateway:
        first = Incoming("reference", "1", "hello", sender_id="alice", update_id="u1")
        assert await gateway.receive(first) is not None
        redelivered = Incoming("reference", "1", "hello", sender_id="alice", update_id="u1", attachments=(photo(),))
        stranger = Incoming("reference", "1", "", sender_id="mallory", update_id="u2", attachments=(photo(),))
        unmentioned = Incoming("reference", "g", "look", sender_id="alice", update_id="u3", chat_kind="group",
                               attachments=(photo(),))
        for incoming in (redelivered, stranger, unmentioned):
            assert await gateway.receive(incoming) is None
    assert fetches.calls == []
    assert len(upstream.requests) == 1


async def test_a_message_stopped_before_its_turn_fetches_nothing(tmp_path: Path) -> None:
    """Queued behind a running reply, then /stop: the queued message's file is never fetched."""
    ref, fetches = ReferencePlatform(), Fetches()
    async with ScriptedUpstream(default=[("data", chunk("", role="assistant")), ("forever", 0.05)]) as slow:
        async with TestGateway(config(tmp_path, slow), ref) as gateway:
            running = gateway.receive(Incoming("reference", "1", "talk", sender_id="a", update_id="u1"))
            while not slow.requests:
                await asyncio.sleep(0.01)
            queued = gateway.receive(Incoming("reference", "1", "", sender_id="a", update_id="u2", attachments=(
                fetches.attachment("document", b"later", filename="later.txt"),)))
            await gateway.receive(Incoming("reference", "1", "/stop", sender_id="a", update_id="u3"))
            await asyncio.wait_for(running, 20)
            assert await asyncio.wait_for(queued, 20) is None
    assert fetches.calls == []


async def test_a_model_that_cannot_see_gets_stand_ins_and_the_person_one_line(
        tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    photos = [fetches.attachment("image", image_bytes(10, 10), filename=name) for name in ("a.png", "b.png")]
    data = config(tmp_path, upstream)
    data["model"]["vision"] = False
    async with TestGateway(data, ref):
        await ref.say("1", "see?", attachments=photos)
    assert fetches.calls == []  # not even downloaded
    content = user_content(upstream.requests[0])
    assert isinstance(content, str) and "image_url" not in json.dumps(upstream.requests[0].body)
    assert "[image: a.png: the person sent it; it is not shown to you, since this model cannot look at images]" \
        in content
    assert ref.chat("1").screen == [
        "🖼 This model cannot look at images, so it was only told you sent a.png, b.png.\n\nGot it."]


async def test_history_keeps_stand_ins_and_re_sends_images_only_for_the_latest_turns(
        tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    async with TestGateway(config(tmp_path, upstream, store={"history_images": 2}), ref) as gateway:
        for n in range(3):
            await ref.say("1", f"photo {n}",
                          attachments=[fetches.attachment("image", image_bytes(20 + n, 10), filename=f"p{n}.png")])
        await ref.say("1", "which was widest?")
        stored = await gateway.history("reference", "1")
    last = upstream.requests[-1].body
    users = [m for m in last["messages"] if m["role"] == "user"]
    widths = [[image_size(b)[1] for b in images_in(m["content"])] for m in users]
    assert widths == [[], [21], [22], []]  # p0's turn is older than the last two: its stand-in only
    assert "[image: p0.png (PNG 20x10)]" in text_of(users[0]["content"])
    assert "hermes_file" not in json.dumps(last)  # the private key never goes upstream
    assert "data:image" not in json.dumps(stored)  # history keeps stand-ins and paths, not the bytes
    paths = [p["hermes_file"]["path"] for m in stored if m["role"] == "user" and isinstance(m["content"], list)
             for p in m["content"] if "hermes_file" in p]
    assert len(paths) == 3 and all(Path(p).parent == (tmp_path / "media").resolve() for p in paths)


async def test_the_responses_api_is_sent_input_image(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    def event(kind: str, n: int, **data: Any) -> tuple:
        return ("event", kind, {"type": kind, "sequence_number": n, **data})

    response = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed",
                "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    upstream.add(event("response.created", 0, response={**response, "status": "in_progress"}),
                 event("response.output_text.delta", 1, item_id="msg_1", output_index=0, content_index=0,
                       delta="Seen."),
                 event("response.completed", 2, response=response))
    ref, fetches = ReferencePlatform(), Fetches()
    data = config(tmp_path, upstream)
    data["model"]["api_mode"] = "responses"
    async with TestGateway(data, ref):
        await ref.say("1", "look", attachments=[fetches.attachment("image", image_bytes(2000, 1000), filename="w.png")])
    [item] = [i for i in upstream.requests[0].body["input"] if i.get("role") == "user"]
    [image] = [p for p in item["content"] if p["type"] == "input_image"]
    assert image_size(base64.b64decode(image["image_url"].partition(",")[2])) == ("JPEG", 1568, 784)
    assert ref.chat("1").screen == ["Seen."]


async def test_the_demo_model_describes_what_it_was_given(tmp_path: Path) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    files = [fetches.attachment("image", image_bytes(3000, 1500, "PNG"), filename="wide.png"),
             fetches.attachment("document", pdf_bytes("Minutes of the meeting held on Monday the first"),
                                filename="minutes.pdf")]
    async with TestGateway(config(tmp_path), ref):
        await ref.say("1", "describe: these", attachments=files)
    assert ref.chat("1").screen == [
        'I see a JPEG image of 1568x784 pixels; a document minutes.pdf (PDF, 1 page) that begins "Minutes of the '
        'meeting held on Monday the ...".']  # its first eight words


async def test_a_failure_line_shows_first_while_the_reply_streams(tmp_path: Path) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    data = config(tmp_path, streaming={"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}})
    data["model"]["demo"] = {"tokens_per_second": 200}
    async with TestGateway(data, ref):
        await ref.say("1", "echo: one two three four five six", attachments=[
            fetches.attachment("video", b"\x00\x00\x00\x18ftypmp42", filename="clip.mp4")])
    line = "📎 clip.mp4: I cannot watch videos yet"
    [message] = ref.chat("1").messages
    assert len(message.history) > 1  # it streamed: several states of one message
    assert all(state.startswith(line) for state in message.history)  # the line first, from the first preview
    assert message.text.startswith(line + "\n\none two three four five six")
    assert fetches.calls == []


async def test_the_bot_is_typing_while_a_slow_file_downloads(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    from hermes_gateway import Attachment

    loop = asyncio.get_running_loop()
    done: list[float] = []

    async def slow_fetch():
        for _ in range(8):  # 2.4 s: past the session's 1 s typing delay
            await asyncio.sleep(0.3)
            yield b"line of text\n"
        done.append(loop.time())

    ref = ReferencePlatform()
    async with TestGateway(config(tmp_path, upstream, conversation={"typing_interval": 0.5}), ref):
        await ref.say("1", "read this", attachments=[Attachment("document", slow_fetch, filename="slow.txt")])
    typing = [c.at for c in ref.chat("1").calls if c.kind == "typing"]
    assert typing and typing[0] < done[0] - 0.5  # shown while the file was still coming
    assert "[document: slow.txt (text)]" in text_of(user_content(upstream.requests[0]))


async def test_a_screenshot_sent_as_a_file_is_looked_at_as_an_image(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    ref, fetches = ReferencePlatform(), Fetches()
    shot = fetches.attachment("document", image_bytes(2560, 1440, "PNG"), filename="Screenshot 2026-12-01.png")
    async with TestGateway(config(tmp_path, upstream), ref):
        await ref.say("1", "what does this error say?", attachments=[shot])
    [sent] = images_in(user_content(upstream.requests[0]))
    assert image_size(sent) == ("JPEG", 1568, 882)
