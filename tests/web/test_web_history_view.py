"""A stored user message with files, as the chat page redraws it: the caption, and each file by name."""

from __future__ import annotations

from hermes_gateway._core.web.history_view import inside, user_view


def test_the_caption_stays_and_files_are_named_not_dumped(tmp_path):
    photo = tmp_path / "0123456789abcdef-red.png"
    photo.write_bytes(b"png")
    content = [{"type": "text", "text": "look\n\n"},
               {"type": "text", "text": "[image: red.png (PNG 4x4)]\n",
                "hermes_file": {"path": str(photo), "kind": "image"}},
               {"type": "text", "text": "[document: n.txt (text)]\nsecret plans\n[end of n.txt]\n"}]
    served = []
    text, files = user_view(content, lambda path, mime, name: served.append((path, mime, name)) or "/u/1")
    assert text == "look"
    assert files == [{"name": "red.png", "kind": "image", "url": "/u/1", "label": "[image: red.png (PNG 4x4)]"},
                     {"name": None, "kind": "file", "url": None, "label": "[document: n.txt (text)]"}]
    assert served == [(str(photo), "image/png", "red.png")]


def test_files_alone_plain_text_and_junk():
    assert user_view("just words", lambda *a: None) == ("just words", [])
    assert user_view([{"type": "text", "text": "[voice note, transcribed] hi\n"}], lambda *a: None) == \
        ("", [{"name": None, "kind": "file", "url": None, "label": "[voice note, transcribed] hi"}])
    assert user_view([None, 3, {"type": "image_url"}, {"text": 5}], lambda *a: None) == ("", [])
    assert user_view({"not": "a list"}, lambda *a: None) == ("", [])


def test_only_files_inside_the_media_directory_are_served(tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    (media / "a.png").write_bytes(b"x")
    outside = tmp_path / "secret.txt"
    outside.write_text("no")
    (media / "link.png").symlink_to(outside)
    assert inside(str(media / "a.png"), media)
    assert not inside(str(outside), media)
    assert not inside(str(media / "link.png"), media)  # a symlink out of it
    assert not inside(str(media / "../secret.txt"), media)
    assert not inside(str(media / "gone.png"), media)
