"""History for the model: images re-shown for the latest turns only, never from outside the media directory."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_gateway._core.content.file_content import FILE_KEY, MediaSettings
from hermes_gateway._core.content.history_media import history_for_model

from files_helpers import image_bytes


def settings(tmp_path: Path, **kw) -> MediaSettings:
    return MediaSettings(directory=tmp_path / "media", limits={}, **kw)


def turn(text: str, path: Path | None) -> list[dict]:
    parts: list[dict] = [{"type": "text", "text": text}]
    if path is not None:
        parts.append({"type": "text", "text": f"[image: {path.name}]", FILE_KEY: {"path": str(path), "kind": "image"}})
    return [{"role": "user", "content": parts}, {"role": "assistant", "content": "ok"}]


def shown(history: list[dict]) -> list[int]:
    return [sum(p.get("type") == "image_url" for p in m["content"]) for m in history if m["role"] == "user"]


async def test_plain_history_is_passed_as_it_is(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert await history_for_model(history, settings(tmp_path)) == history


async def test_only_the_latest_turns_get_their_images_again(tmp_path: Path) -> None:
    media = tmp_path / "media"
    media.mkdir()
    history = []
    for n in range(4):
        path = media / f"p{n}.png"
        path.write_bytes(image_bytes(10, 10))
        history += turn(f"photo {n}", path)
    out = await history_for_model(history, settings(tmp_path, history_images=2))
    assert shown(out) == [0, 0, 1, 1]
    assert FILE_KEY not in json.dumps(out)
    assert shown(await history_for_model(history, settings(tmp_path, history_images=0))) == [0, 0, 0, 0]
    assert shown(await history_for_model(history, settings(tmp_path, history_images=2, vision=False))) == [0] * 4


async def test_a_stored_path_outside_the_media_directory_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "media").mkdir()
    outside = tmp_path / "secret.png"
    outside.write_bytes(image_bytes(10, 10))
    link = tmp_path / "media" / "link.png"
    link.symlink_to(outside)
    history = turn("a", outside) + turn("b", link) + turn("c", tmp_path / "media" / "gone.png")
    out = await history_for_model(history, settings(tmp_path, history_images=3))
    assert shown(out) == [0, 0, 0]
    assert [p["text"] for p in out[0]["content"]] == ["a", "[image: secret.png]"]  # the stand-in stays
