"""History as the model is sent it: images a person sent re-shown for the latest turns only.

History keeps an image as a text stand-in plus the stored file's path
(:data:`~.file_content.FILE_KEY`). For the newest ``store.history_images``
user messages of the history (the turns just before this one) the image is
read again from the media directory, downscaled, and sent after its
stand-in, so "and what about the second photo?" works; older turns keep
only the stand-in (images are the most expensive tokens there are). A file
no longer in the media directory (swept after ``media.keep_days``, or a
path that resolves outside it) stays a stand-in. The key is removed from
every part before anything goes upstream: a strict upstream refuses
unknown fields.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

from ..media_dir import MediaDirectory
from .file_content import FILE_KEY, MediaSettings, decode_image
from .image_parts import ImageError

log = logging.getLogger(__name__)


def _has_files(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and FILE_KEY in p for p in content)


async def history_for_model(history: Sequence[dict[str, Any]], settings: MediaSettings) -> list[dict[str, Any]]:
    """``history`` with stand-ins turned back into images for the latest turns, the private key removed."""
    if not any(_has_files(m) for m in history):
        return list(history)
    users = [i for i, m in enumerate(history) if m.get("role") == "user"]
    recent = set(users[-settings.history_images:]) if settings.history_images and settings.vision else set()
    directory = MediaDirectory(settings.directory)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(history):
        if not _has_files(message):
            out.append(message)
            continue
        parts: list[dict[str, Any]] = []
        for part in message["content"]:
            if not isinstance(part, dict) or FILE_KEY not in part:
                parts.append(part)
                continue
            parts.append({k: v for k, v in part.items() if k != FILE_KEY})
            if index in recent:
                image = await _image_again(part[FILE_KEY], directory, settings)
                if image is not None:
                    parts.append(image)
        out.append({**message, "content": parts})
    return out


async def _image_again(file: Any, directory: MediaDirectory, settings: MediaSettings) -> dict[str, Any] | None:
    path = file.get("path") if isinstance(file, dict) else None
    if not isinstance(path, str) or file.get("kind") != "image" or not directory.contains(path):
        return None
    try:
        image = await decode_image(path, settings)
    except ImageError as exc:
        log.info("an image of the history is not re-sent: %s", exc)
        return None
    return image.part()


def strip_file_keys(content: Any) -> Any:
    """A user content without the private key (for a surface that does not re-show images)."""
    if not isinstance(content, list):
        return content
    return [{k: v for k, v in p.items() if k != FILE_KEY} if isinstance(p, dict) else p for p in content]
