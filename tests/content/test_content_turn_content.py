"""The user content of a turn: plain text as before; files fetched once, in order, converted by kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_gateway import Attachment, Incoming
from hermes_gateway._core.content.file_content import FILE_KEY, MediaSettings
from hermes_gateway._core.content.turn_content import content_kind, turn_content, with_stored_user

from files_helpers import Fetches, image_bytes


def settings(tmp_path: Path, **kw) -> MediaSettings:
    return MediaSettings(directory=tmp_path / "media", limits={"image": 10**7, "document": 10**7}, **kw)


async def test_messages_without_files_are_their_text_as_before(tmp_path: Path) -> None:
    messages = [Incoming("p", "1", "first"), Incoming("p", "1", "second")]
    content = await turn_content(messages, settings(tmp_path))
    assert (content.model, content.stored, content.lines) == ("first\n\nsecond", "first\n\nsecond", [])
    assert not (tmp_path / "media").exists()  # nothing touched


async def test_merged_messages_keep_their_order_and_each_file_is_fetched_once(tmp_path: Path) -> None:
    fetches = Fetches()
    messages = [Incoming("p", "1", "look", attachments=(fetches.attachment("image", image_bytes(8, 8), filename="a.png"),)),
                Incoming("p", "1", "", attachments=(fetches.attachment("document", b"hi", filename="b.txt"),))]
    content = await turn_content(messages, settings(tmp_path))
    assert [p["type"] for p in content.model] == ["text", "text", "image_url", "text"]
    assert content.model[0]["text"] == "look\n\n" and content.model[3]["text"].startswith("[document: b.txt")
    assert [FILE_KEY in p for p in content.stored] == [False, True, False]
    assert fetches.calls == ["a.png", "b.txt"]


@pytest.mark.parametrize("name,mime,kind", [("shot.png", None, "image"), ("x", "image/jpeg", "image"),
                                            ("memo.ogg", None, "audio"), ("drawing.svg", None, "document"),
                                            ("report.pdf", "application/pdf", "document")])
def test_a_document_is_read_by_what_it_is(name: str, mime: str | None, kind: str) -> None:
    assert content_kind(Attachment("document", lambda: None, mime=mime, filename=name)) == kind  # type: ignore
    assert content_kind(Attachment("voice", lambda: None, filename=name)) == "voice"  # type: ignore


def test_the_recorded_turn_keeps_the_stored_user_content() -> None:
    turn = [{"role": "user", "content": [{"type": "image_url"}]}, {"role": "assistant", "content": "ok"}]
    stored = [{"type": "text", "text": "[image: a.png]", FILE_KEY: {"path": "/m/a.png", "kind": "image"}}]
    assert with_stored_user(turn, stored) == [{"role": "user", "content": stored}, turn[1]]
    assert with_stored_user(turn, "plain") is turn


async def test_only_files_that_could_not_be_used_and_no_words_leave_nothing_to_answer(tmp_path: Path) -> None:
    """A video nothing can watch, alone: its line is the answer (no model turn on a stand-in)."""
    fetches = Fetches()
    video = fetches.attachment("video", b"\0\0\0\x18ftypmp42", filename="clip.mp4")
    content = await turn_content([Incoming("p", "1", "", attachments=(video,))], settings(tmp_path))
    assert not content.answerable and content.lines == ["📎 clip.mp4: I cannot watch videos yet"]
    assert fetches.calls == [], "a kind nothing can take is never downloaded"


@pytest.mark.parametrize("text, also_a_document", [("what is in it?", False), ("", True)],
                         ids=["with_words", "with_a_usable_file"])
async def test_words_or_one_usable_file_are_still_answered(tmp_path: Path, text: str, also_a_document: bool) -> None:
    fetches = Fetches()
    files = [fetches.attachment("video", b"\0\0\0\x18ftypmp42", filename="clip.mp4")]
    if also_a_document:
        files.append(fetches.attachment("document", b"the minutes", filename="minutes.txt"))
    content = await turn_content([Incoming("p", "1", text, attachments=tuple(files))], settings(tmp_path))
    assert content.answerable and content.lines == ["📎 clip.mp4: I cannot watch videos yet"]
