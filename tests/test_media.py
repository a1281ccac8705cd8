"""Media values: one source each, a kind from the mime type, the stand-in the model reads, the line a person sees."""

from __future__ import annotations

import pytest

from hermes_gateway import Media, MediaLimits, ToolResult


def test_an_item_has_exactly_one_source():
    with pytest.raises(ValueError, match="exactly one of path, url or data"):
        Media()
    with pytest.raises(ValueError, match="exactly one"):
        Media(path="a.png", url="https://example.com/a.png")


def test_kind_and_mime_follow_the_name_unless_given():
    assert (Media(path="qr.png").mime, Media(path="qr.png").kind) == ("image/png", "image")
    assert Media(url="https://example.com/talk.mp3?x=1").kind == "audio"
    assert Media(data=b"...", mime="video/mp4").filename == "file.mp4"
    assert Media(data=b"...").kind == "document" and Media(data=b"...").mime == "application/octet-stream"
    assert Media(path="qr.png", kind="document").kind == "document"   # send an image as a file
    with pytest.raises(ValueError, match="kind must be one of"):
        Media(path="qr.png", kind="sticker")


def test_only_web_links_are_taken():
    with pytest.raises(ValueError, match="http\\(s\\) URL, got scheme 'file'"):
        Media(url="file:///etc/passwd")


def test_a_filename_never_carries_a_directory():
    assert Media(data=b"x", filename="../../etc/passwd").filename == "passwd"
    assert Media(data=b"x", filename="..\\evil\x00.txt").filename == "evil.txt"


def test_the_model_reads_a_stand_in_and_the_person_a_line_when_it_cannot_be_attached():
    item = Media(data=b"x", filename="qr.png", caption="Scan me\nplease")
    assert item.stand_in() == "[image: qr.png attached]"
    assert item.fallback_line("too large for Telegram") == "📎 qr.png — Scan me (too large for Telegram)"
    link = Media(url="https://example.com/a.pdf", caption="The report")
    assert link.fallback_line() == "🔗 The report: https://example.com/a.pdf"
    refused = Media(filename="key.pem", refused="outside the media directory")
    assert refused.stand_in() == "[document: key.pem could not be attached: outside the media directory]"


def test_a_tool_result_takes_one_item_or_a_list():
    item = Media(data=b"x", filename="a.png")
    assert ToolResult("done", item).media == (item,)
    with pytest.raises(TypeError, match="Media items"):
        ToolResult("done", ["a.png"])


def test_limits_are_checked_when_declared():
    with pytest.raises(ValueError, match="unknown kind\\(s\\) gif"):
        MediaLimits(kinds={"gif"})
    limits = MediaLimits(max_bytes={"image": 10, "default": 100})
    assert (limits.limit_for("image"), limits.limit_for("video")) == (10, 100)
    assert MediaLimits().limit_for("image") is None


def test_a_voice_note_is_an_audio_item_flagged_for_the_platform():
    note = Media(data=b"OggS", mime="audio/ogg", filename="voice.ogg", kind="audio", voice=True)
    assert (note.kind, note.voice, Media(data=b"x", mime="audio/ogg").voice) == ("audio", True, False)
    assert note.with_caption("hi").voice, "kept when the core recaptions or admits it"
