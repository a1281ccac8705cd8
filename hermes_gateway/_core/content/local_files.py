"""A file on this machine as an :class:`Attachment`: what the terminal's ``/attach PATH`` sends.

The terminal has no platform to download from, but its files take the same
path as a chat's (limits, the media directory, images to the model,
documents to text), so a local file is wrapped like a platform's: kind and
mime from its name, size from the file system, and a ``fetch`` that reads
it in chunks in a thread (the event loop never waits on the disk).
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
from pathlib import Path
from typing import AsyncIterator

from ..messages.attachments import Attachment, FetchError

CHUNK = 256 * 1024


def kind_for(mime: str | None) -> str:
    """``image`` / ``audio`` / ``video`` from the mime type's major part; anything else is a ``document``."""
    major = (mime or "").split("/", 1)[0]
    return major if major in ("image", "audio", "video") else "document"


def file_attachment(path: str | os.PathLike[str]) -> Attachment:
    """The file at ``path`` (``~`` expanded) as an Attachment; ``FileNotFoundError`` / ``IsADirectoryError``
    when it is not a readable file."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise IsADirectoryError(f"{file} is a directory, not a file")
    size = file.stat().st_size  # FileNotFoundError names the path
    if not os.access(file, os.R_OK):
        raise PermissionError(f"{file} is not readable")
    mime = mimetypes.guess_type(file.name)[0]

    def fetch() -> AsyncIterator[bytes]:
        return _read(file)

    return Attachment(kind_for(mime), fetch, mime=mime, size=size, filename=file.name)  # type: ignore[arg-type]


async def _read(file: Path) -> AsyncIterator[bytes]:
    try:
        handle = await asyncio.to_thread(open, file, "rb")
    except OSError as exc:
        raise FetchError(f"cannot read {file.name}: {exc.strerror or exc}") from None
    try:
        while chunk := await asyncio.to_thread(handle.read, CHUNK):
            yield chunk
    finally:
        handle.close()
