"""A stored message as the chat page redraws it after a reload: the person's words, and their files by name.

History keeps what the person sent with files as parts (:mod:`..content.turn_content`):
their caption (a text part ending in a blank line), then per file a stand-in
(``[image: a.png (PNG 10x10)]``, a document's header and whole text, a
transcript). The page shows the caption as the person wrote it and each file
as they attached it — an image as a thumbnail (its stored copy in the media
directory, served to this chat only), anything else by the stand-in's first
line — never a document's whole text in the person's own bubble.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path
from typing import Any, Callable

from ..content.file_content import FILE_KEY

#: ``serve(path, mime, filename)``: a URL for a stored file, or None.
Serve = Callable[[str, str, str], "str | None"]


def inside(path: str, directory: Path) -> bool:
    """Whether ``path`` is a file within ``directory`` (symlinks resolved)."""
    try:
        real, root = Path(path).resolve(), directory.resolve()
    except OSError:
        return False
    return real.is_relative_to(root) and os.path.isfile(real)


def user_view(content: Any, serve: Serve) -> tuple[str, list[dict[str, Any]]]:
    """The text and the files of a stored user message (``content`` a string or a list of parts)."""
    if isinstance(content, str):
        return content, []
    words: list[str] = []
    files: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            continue
        text = part["text"]
        stored = part.get(FILE_KEY)
        if isinstance(stored, dict) and isinstance(stored.get("path"), str):
            path = stored["path"]
            name = os.path.basename(path).split("-", 1)[-1]
            mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
            url = serve(path, mime, name) if stored.get("kind") in ("image", "sticker") else None
            files.append({"name": name, "kind": stored.get("kind"), "url": url, "label": text.strip()})
        elif text.endswith("\n\n") and not files:
            words.append(text.strip())
        else:
            first = text.strip().split("\n", 1)[0]
            if first:
                files.append({"name": None, "kind": "file", "url": None, "label": first})
    return "\n\n".join(w for w in words if w), files
