"""Fetching a file a person sent into the media directory, within ``media.inbound_max_bytes``.

The limit for the attachment's kind is checked twice: against the size the
platform declares, before anything is fetched (a file that says it is too
large is never downloaded), and against the bytes actually received, while
they stream (a platform may not declare a size, or declare it wrong). The
chunks go straight into a new file in the media directory, so at most one
chunk is held in memory, never the whole file; a file that turns out too
large, fails, or is empty is removed again. Nothing is written anywhere
else: the name is ``<16 random hex>-<the file's own name, sanitised>``,
created exclusively inside the directory (no overwrite, no symlink
followed).

Whatever goes wrong costs one :class:`Refused` with a short reason the
person is shown in one line ("📎 scan.pdf: too large (31 MB; the limit is
20 MB)"); the rest of the message is still answered.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HermesError
from ..messages.attachments import Attachment, FetchError

log = logging.getLogger(__name__)

#: A fetch that has not finished after this many seconds is given up (the person is told in one line).
FETCH_TIMEOUT = 120.0
#: The longest file name kept (the rest is cut; the name is only shown, never trusted as a path).
MAX_NAME = 80
_UNSAFE = re.compile(r"[^\w.\- ()\[\]+,@]+", re.UNICODE)

#: What a file of each kind is called when it has no name of its own.
KIND_WORDS = {"image": "photo", "document": "file", "audio": "audio file", "voice": "voice note",
              "video": "video", "sticker": "sticker"}


@dataclass(frozen=True)
class Received:
    """A file now in the media directory: ``path`` is inside it, ``size`` the bytes received."""

    attachment: Attachment
    path: Path
    size: int
    name: str


@dataclass(frozen=True)
class Refused:
    """A file that could not be had; ``why`` is shown to the person after its name."""

    attachment: Attachment
    name: str
    why: str

    @property
    def line(self) -> str:
        """The one line the person is shown."""
        return f"📎 {self.name}: {self.why}"


def display_name(attachment: Attachment) -> str:
    """How the file is named to the person and the model: its own name, else what it is (``photo``)."""
    name = (attachment.filename or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    name = "".join(ch for ch in name if ch.isprintable())
    return name[:MAX_NAME] or KIND_WORDS.get(attachment.kind, "file")


def human_size(n: float) -> str:
    """``31 MB``, ``1.5 MB``, ``640 KB``, ``12 bytes`` (binary units, as chat apps show them)."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}".replace(".0 ", " ") if value < 10 else f"{value:.0f} {unit}"
    return f"{int(n)} byte{'s' if n != 1 else ''}"


def too_large(size: int | None, limit: int) -> str:
    if size is None:
        return f"too large (over the limit of {human_size(limit)})"
    return f"too large ({human_size(size)}; the limit is {human_size(limit)})"


def _file_name(name: str) -> str:
    safe = _UNSAFE.sub("_", name).strip(". ") or "file"
    return f"{secrets.token_hex(8)}-{safe[:MAX_NAME]}"


async def download(attachment: Attachment, directory: str | os.PathLike[str], limit: int, *,
                   timeout: float = FETCH_TIMEOUT) -> Received | Refused:
    """Fetch ``attachment`` (calling its ``fetch`` once) into ``directory``, at most ``limit`` bytes.

    Never raises for a bad file: a :class:`Refused` says why. Cancellation
    (the person said ``/stop``) removes the partial file and propagates.
    """
    name = display_name(attachment)
    if attachment.size is not None and attachment.size > limit:
        return Refused(attachment, name, too_large(attachment.size, limit))
    root = Path(os.path.realpath(Path(directory).expanduser()))
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = root / _file_name(name)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    received = 0
    keep = False
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                async with asyncio.timeout(timeout):
                    received = await _stream(attachment, out, limit)
            except _TooLarge:
                return Refused(attachment, name, too_large(attachment.size if (attachment.size or 0) > limit
                                                           else None, limit))
            except TimeoutError:
                log.warning("a %s could not be downloaded: no end after %gs", attachment.kind, timeout)
                return Refused(attachment, name, "could not be downloaded (it took too long)")
            except FetchError as exc:
                log.warning("a %s could not be downloaded: %s", attachment.kind, exc)
                return Refused(attachment, name, f"could not be downloaded ({exc})" if str(exc)
                               else "could not be downloaded")
            except Exception as exc:  # the plugin's fetch failed: its message may carry a URL with a token
                log.warning("a %s could not be downloaded: %s", attachment.kind, type(exc).__name__)
                return Refused(attachment, name, "could not be downloaded")
        if received == 0:
            return Refused(attachment, name, "the file is empty")
        keep = True
        return Received(attachment, target, received, name)
    finally:
        if not keep:
            try:
                os.unlink(target)
            except OSError:
                pass


class _TooLarge(HermesError):
    pass


async def _stream(attachment: Attachment, out: Any, limit: int) -> int:
    """Write the fetched chunks to ``out``; stop (closing the fetch) as soon as ``limit`` would be passed.

    Writes go to the page cache: microseconds per chunk, not worth a thread hop each."""
    received = 0
    chunks = attachment.fetch()
    try:
        async for chunk in chunks:
            if not isinstance(chunk, (bytes, bytearray, memoryview)):
                raise FetchError(f"the platform gave {type(chunk).__name__}, not bytes")
            received += len(chunk)
            if received > limit:
                raise _TooLarge()
            out.write(chunk)
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:
                log.debug("closing a fetch failed", exc_info=True)
    return received
