"""Files from the browser: one multipart upload read into ``Attachment`` values, within ``media.inbound_max_bytes``.

``POST /ui/api/chat/upload`` (``multipart/form-data``) carries an optional
``text`` field (the caption) and up to :data:`MAX_FILES` files in ``file``
fields (a ``voice`` field is a voice note recorded in the page). Each file
is written to a spool file in the media directory as it streams (one
chunk in memory at a time, never the file), and the request is refused
with a 413 the moment a file passes the limit for its kind
(``media.inbound_max_bytes``), or all files together pass the largest of
those limits. What is kept becomes an :class:`Attachment` whose ``fetch``
streams the spool file (and removes it), handed to the inbound runtime
exactly as a Telegram photo is: the core stores it in the media directory,
shows an image to the model, reads a document's text, transcribes a voice
note, and turns a file it cannot use into one line of the reply.

Files wait on disk until their turn runs, and each chat may have at most
``media.upload_queue_files`` files and ``media.upload_queue_bytes`` bytes
accepted and not yet answered (:class:`UploadQueue`): past either, the
upload is a 429 and what is already queued is untouched. Spool files are
removed when the message's turn ends (answered, dropped by ``/stop``, or
the gateway stopping) and whenever an upload is refused.

Anything malformed is a 4xx with a JSON error: not multipart (415), a
broken body, an unknown field, text that is not UTF-8 (400).
"""

from __future__ import annotations

import mimetypes
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping

from aiohttp import BodyPartReader, web

from ..messages.attachments import Attachment
from .responses import json_error

#: Files one message may carry.
MAX_FILES = 10
#: Bytes of multipart framing (headers, boundaries) allowed beyond the files themselves.
FRAMING = 64 * 1024
CHUNK = 64 * 1024


class UploadQueue:
    """Per chat, the files uploaded and not yet answered, and their bytes: what :class:`QueueBound` bounds."""

    def __init__(self) -> None:
        self.files: dict[str, int] = {}
        self.bytes: dict[str, int] = {}

    def add(self, chat_id: str, files: int, size: int) -> None:
        self.files[chat_id] = self.files.get(chat_id, 0) + files
        self.bytes[chat_id] = self.bytes.get(chat_id, 0) + size
        if self.files[chat_id] <= 0 and self.bytes[chat_id] <= 0:
            del self.files[chat_id], self.bytes[chat_id]


@dataclass(frozen=True)
class QueueBound:
    """One chat's share of the queue: ``media.upload_queue_files`` files and ``upload_queue_bytes`` bytes."""

    queue: UploadQueue
    chat_id: str
    max_files: int
    max_bytes: int

    def refusal(self, files: int, size: int, own: tuple[int, int] = (0, 0)) -> web.Response | None:
        """The 429 when ``files`` more files of ``size`` more bytes would not fit, else None. ``own``: what the
        upload asking already holds (not named as waiting: it is refused whole)."""
        held_files = self.queue.files.get(self.chat_id, 0)
        held_bytes = self.queue.bytes.get(self.chat_id, 0)
        if held_files + files <= self.max_files and held_bytes + size <= self.max_bytes:
            return None
        held_files, held_bytes = held_files - own[0], held_bytes - own[1]
        waiting = f"{held_files} file{'s' if held_files != 1 else ''} ({_size(held_bytes)})" if held_files \
            else "files"
        return json_error(429, f"this chat already has {waiting} waiting to be read (at most {self.max_files} "
                               f"files, {_size(self.max_bytes)}); send more once they are answered", "queue_full")


@dataclass
class Upload:
    """What one upload carries: the caption, the files (for the core), and what the page shows of them.

    ``spooled``: the files on disk; ``held``: the files and bytes counted in the chat's queue until
    :meth:`discard` (the turn ended, or the upload was refused)."""

    text: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    shown: list[dict[str, Any]] = field(default_factory=list)
    spooled: list[Path] = field(default_factory=list)
    bound: QueueBound | None = None
    held: list[int] = field(default_factory=lambda: [0, 0])

    def hold(self, files: int, size: int) -> web.Response | None:
        """Count ``files``/``size`` more in the chat's queue, or the 429 when they do not fit."""
        if self.bound is None:
            return None
        refused = self.bound.refusal(files, size, (self.held[0], self.held[1]))
        if refused is None:
            self.bound.queue.add(self.bound.chat_id, files, size)
            self.held[0] += files
            self.held[1] += size
        return refused

    def discard(self) -> None:
        """The spool files removed (those not fetched yet) and the queue's count given back; idempotent."""
        for path in self.spooled:
            try:
                path.unlink()
            except OSError:
                pass
        self.spooled.clear()
        if self.bound is not None and self.held != [0, 0]:
            self.bound.queue.add(self.bound.chat_id, -self.held[0], -self.held[1])
            self.held = [0, 0]


def kind_of(field_name: str, mime: str, filename: str) -> str:
    """``voice`` for a recorded note; else ``image``/``audio``/``video`` by mime type; anything else a document
    (an SVG too: it is text to read, not pixels)."""
    if field_name == "voice":
        return "voice"
    if not mime or mime == "application/octet-stream":
        mime = mimetypes.guess_type(filename)[0] or ""
    major = mime.split("/", 1)[0]
    if mime.endswith("+xml"):
        return "document"
    return major if major in ("image", "audio", "video") else "document"


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{max(1, n // 1024)} KB"


def _spooled(path: Path) -> Callable[[], AsyncIterator[bytes]]:
    """The attachment's fetch: the spool file's chunks, then the file is gone (the core has its own copy)."""
    async def fetch() -> AsyncIterator[bytes]:
        try:
            with open(path, "rb") as file:  # page-cache reads of one chunk: not worth a thread hop each
                while chunk := file.read(CHUNK):
                    yield chunk
        finally:
            try:
                path.unlink()
            except OSError:
                pass
    return fetch


def _spool_file(directory: Path) -> tuple[Path, int]:
    """A new file in the media directory, created exclusively (no overwrite, no symlink followed)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{secrets.token_hex(8)}-upload.part"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return path, os.open(path, flags, 0o600)


async def read_upload(request: web.Request, limits: Mapping[str, int], max_text: int, spool: Path,
                      bound: QueueBound | None = None) -> Upload | web.Response:
    """The upload's caption and files (spooled to files in ``spool``), or the 4xx to answer. ``bound``: the
    chat's queue, which the files are counted in until the caller discards the upload (its turn ended)."""
    if request.content_type != "multipart/form-data":
        return json_error(415, "send the files as multipart/form-data (a form with file fields)", "bad_content_type")
    total_limit = max(limits.values(), default=0)
    if request.content_length is not None and request.content_length > total_limit + FRAMING:
        return json_error(413, f"the files are larger than {_size(total_limit)} together", "too_large")
    if bound is not None and (refused := bound.refusal(1, 1)) is not None:  # full already: the body is not read
        return refused
    upload = Upload(bound=bound)
    try:
        got = await _read(request, limits, max_text, spool, upload, total_limit)
    except BaseException:
        upload.discard()
        raise
    if isinstance(got, web.Response):
        upload.discard()  # nothing of a refused upload stays, on disk or in the count
    return got


async def _read(request: web.Request, limits: Mapping[str, int], max_text: int, spool: Path, upload: Upload,
                total_limit: int) -> Upload | web.Response:
    total = 0
    seen_text = False
    try:
        reader = await request.multipart()
        while True:
            part = await reader.next()
            if part is None:
                break
            if not isinstance(part, BodyPartReader):  # a nested multipart: not what a form sends
                return json_error(400, "a nested multipart body is not a form", "bad_form")
            name = part.name or ""
            if name == "text":
                if seen_text:
                    return json_error(400, "one text field per message", "bad_form")
                seen_text = True
                raw = bytearray()
                while chunk := await part.read_chunk(CHUNK):
                    raw += chunk
                    if len(raw) > 4 * max_text:
                        return json_error(413, f"a message is at most {max_text} characters", "too_long")
                try:
                    upload.text = raw.decode("utf-8").replace("\x00", "").strip()
                except UnicodeDecodeError:
                    return json_error(400, "the text is not UTF-8", "bad_text")
                if len(upload.text) > max_text:
                    return json_error(413, f"a message is at most {max_text} characters", "too_long")
                continue
            if name not in ("file", "voice"):
                return json_error(400, f"unknown form field {name[:40]!r} (send text, file or voice)", "bad_form")
            if len(upload.attachments) >= MAX_FILES:
                return json_error(413, f"at most {MAX_FILES} files per message", "too_many_files")
            filename = (part.filename or "").replace("\x00", "")[:200] or ("voice note" if name == "voice" else "file")
            mime = (part.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            kind = kind_of(name, mime, filename)
            limit = limits.get(kind, total_limit)
            refused = upload.hold(1, 0)
            if refused is not None:
                return refused
            path, fd = _spool_file(spool)
            upload.spooled.append(path)
            size = 0
            with os.fdopen(fd, "wb") as out:
                while chunk := await part.read_chunk(CHUNK):
                    size += len(chunk)
                    if size > limit:
                        return json_error(413, f"{filename}: too large (the limit for a {kind} is {_size(limit)})",
                                          "too_large")
                    if total + size > total_limit:
                        return json_error(413, f"the files are larger than {_size(total_limit)} together",
                                          "too_large")
                    refused = upload.hold(0, len(chunk))
                    if refused is not None:
                        return refused
                    out.write(chunk)  # to the page cache: microseconds, as the core's downloads write
            total += size
            upload.attachments.append(Attachment(kind, _spooled(path), mime=mime or None,  # type: ignore[arg-type]
                                                 size=size, filename=filename))
            upload.shown.append({"name": filename, "kind": kind, "size": size})
    except (ValueError, AssertionError, RuntimeError, UnicodeDecodeError) as exc:  # aiohttp's words for a broken form
        return json_error(400, f"the form could not be read ({type(exc).__name__})", "bad_form")
    except Exception:  # a body cut short by the client
        return json_error(400, "the form could not be read", "bad_form")
    return upload
