"""Files from the browser: one multipart upload read into ``Attachment`` values, within ``media.inbound_max_bytes``.

``POST /ui/api/chat/upload`` (``multipart/form-data``) carries an optional
``text`` field (the caption) and up to :data:`MAX_FILES` files in ``file``
fields (a ``voice`` field is a voice note recorded in the page). Each file
is read as it streams, and the request is refused with a 413 the moment a
file passes the limit for its kind (``media.inbound_max_bytes``), or all
files together pass the largest of those limits: nothing beyond a limit is
ever held. What is kept becomes an :class:`Attachment` whose ``fetch``
yields the bytes, handed to the inbound runtime exactly as a Telegram
photo is: the core stores it in the media directory, shows an image to the
model, reads a document's text, transcribes a voice note, and turns a file
it cannot use into one line of the reply.

Anything malformed is a 4xx with a JSON error: not multipart (415), a
broken body, an unknown field, text that is not UTF-8 (400).
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Mapping

from aiohttp import BodyPartReader, web

from ..messages.attachments import Attachment
from .responses import json_error

#: Files one message may carry.
MAX_FILES = 10
#: Bytes of multipart framing (headers, boundaries) allowed beyond the files themselves.
FRAMING = 64 * 1024
CHUNK = 64 * 1024


@dataclass
class Upload:
    """What one upload carries: the caption, the files (for the core), and what the page shows of them."""

    text: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    shown: list[dict[str, Any]] = field(default_factory=list)


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


def _fetcher(data: bytes) -> Callable[[], AsyncIterator[bytes]]:
    async def fetch() -> AsyncIterator[bytes]:
        for start in range(0, len(data), CHUNK):
            yield data[start:start + CHUNK]
    return fetch


async def read_upload(request: web.Request, limits: Mapping[str, int], max_text: int) -> Upload | web.Response:
    """The upload's caption and files, or the 4xx to answer."""
    if request.content_type != "multipart/form-data":
        return json_error(415, "send the files as multipart/form-data (a form with file fields)", "bad_content_type")
    total_limit = max(limits.values(), default=0)
    if request.content_length is not None and request.content_length > total_limit + FRAMING:
        return json_error(413, f"the files are larger than {_size(total_limit)} together", "too_large")
    upload = Upload()
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
            data = bytearray()
            while chunk := await part.read_chunk(CHUNK):
                data += chunk
                if len(data) > limit:
                    return json_error(413, f"{filename}: too large (the limit for a {kind} is {_size(limit)})",
                                      "too_large")
                if total + len(data) > total_limit:
                    return json_error(413, f"the files are larger than {_size(total_limit)} together", "too_large")
            total += len(data)
            upload.attachments.append(Attachment(kind, _fetcher(bytes(data)), mime=mime or None,  # type: ignore[arg-type]
                                                 size=len(data), filename=filename))
            upload.shown.append({"name": filename, "kind": kind, "size": len(data)})
    except (ValueError, AssertionError, RuntimeError, UnicodeDecodeError) as exc:  # aiohttp's words for a broken form
        return json_error(400, f"the form could not be read ({type(exc).__name__})", "bad_form")
    except Exception:  # a body cut short by the client
        return json_error(400, "the form could not be read", "bad_form")
    return upload
