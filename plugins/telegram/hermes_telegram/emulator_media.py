"""The Bot API emulator's upload methods: ``sendPhoto``, ``sendDocument``, ``sendVideo``, ``sendAudio``.

Kept apart from :mod:`.emulator` (which owns text, drafts and updates) so
each stays one job. The rules are Telegram's, as strict as the plugin
depends on:

* the file comes as a multipart part under the method's own field
  (``photo``, ``document``, ``video``, ``audio``); a missing field is
  "there is no photo in the request", a string there (a file_id or URL)
  is "wrong file identifier/HTTP URL specified" (nothing is fetched here);
* a request body over 50 MB never reaches the Bot API: nginx answers
  ``413 Request Entity Too Large`` with an HTML page (python-telegram-bot
  then raises ``NetworkError``, not ``BadRequest``);
* a photo whose width + height exceed 10000 or whose sides' ratio exceeds
  20 is refused (``PHOTO_INVALID_DIMENSIONS``), one over 10 MB too
  (``PHOTO_SAVE_FILE_INVALID``, the client API's answer; what the Bot API
  says is unverified), and a photo that is not an image is
  ``IMAGE_PROCESS_FAILED``;
* ``caption`` is at most 1024 UTF-16 units after trimming ("message
  caption is too long"); an empty file is refused.

An accepted upload becomes a message of its own on the chat's screen,
``[photo: qr.png] caption``, after the messages before it; the bytes and
the file name are kept (:attr:`EmulatedChat.uploads`). Flood control and
injected errors apply as for any call; :meth:`UploadRules.rate_limit_next`
makes the next upload (only) answer 429, :meth:`UploadRules.stall` makes it
answer too late (after taking effect, or not).
"""

from __future__ import annotations

import asyncio
import hashlib
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_gateway.testing import ScreenMessage, SentMedia

if TYPE_CHECKING:
    from .emulator import BotApiEmulator, EmulatedChat

#: method (lower case) -> (its canonical name, the multipart field that carries the file, the kind shown)
UPLOAD_METHODS: dict[str, tuple[str, str, str]] = {
    "sendphoto": ("sendPhoto", "photo", "photo"),
    "senddocument": ("sendDocument", "document", "document"),
    "sendvideo": ("sendVideo", "video", "video"),
    "sendaudio": ("sendAudio", "audio", "audio"),
}
#: The standard Bot API's limits (a local Bot API server allows 2000 MB).
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_CAPTION_UNITS = 1024
#: What nginx in front of api.telegram.org answers for a body over the limit (not JSON).
TOO_LARGE_HTML = ("<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
                  "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n"
                  "</body>\r\n</html>\r\n")


@dataclass(frozen=True)
class UploadedFile:
    """One file part of a multipart request: its field name, file name, content type and bytes."""

    field: str
    filename: str
    content_type: str
    data: bytes


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR, a JPEG's SOF or a GIF's header; None when it is none of those."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data[:2] == b"\xff\xd8":
        index = 2
        while index + 9 < len(data):
            if data[index] != 0xFF:
                return None
            marker = data[index + 1]
            length = struct.unpack(">H", data[index + 2:index + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                height, width = struct.unpack(">HH", data[index + 5:index + 9])
                return width, height
            index += 2 + length
    return None


class UploadRules:
    """The upload methods of one :class:`~.emulator.BotApiEmulator` (it owns one of these)."""

    def __init__(self, api: "BotApiEmulator", *, max_upload_bytes: int = MAX_UPLOAD_BYTES,
                 max_photo_bytes: int = MAX_PHOTO_BYTES) -> None:
        self.api = api
        self.max_upload_bytes = max_upload_bytes
        self.max_photo_bytes = max_photo_bytes
        #: chat id -> the next uploads' stalls: (seconds to answer late, whether it took effect first)
        self.stalls: dict[str, list[tuple[float, bool]]] = {}
        #: chat id -> retry_after of the 429s the next uploads answer (text calls are not affected)
        self.flood: dict[str, list[int]] = {}

    def stall(self, chat_id: int | str, seconds: float, *, landed: bool) -> None:
        """The next upload into the chat answers ``seconds`` late: a client with a shorter timeout gives up.

        ``landed``: it took effect first (the attachment is on screen); else it never does.
        """
        self.stalls.setdefault(str(chat_id), []).append((seconds, landed))

    def rate_limit_next(self, chat_id: int | str, retry_after: int) -> None:
        """The next upload into the chat (not a text call) answers 429 "retry after N"."""
        self.flood.setdefault(str(chat_id), []).append(retry_after)

    async def handle(self, method: str, params: dict[str, Any], files: list[UploadedFile]) -> Any:
        """One upload call, after the token and the body were read; raises ``ApiError`` as Telegram answers."""
        from .emulator import ApiError, utf16_units

        name, field_name, kind = UPLOAD_METHODS[method.lower()]
        chat = self.api._admit(name, params)
        flood = self.flood.get(chat.chat_id, [])
        if flood:
            wait = flood.pop(0)
            self.api._refuse(chat, name, params, ApiError(429, f"Too Many Requests: retry after {wait}",
                                                          {"retry_after": wait}), time.monotonic())
        stall = self.stalls.get(chat.chat_id, [])
        seconds, landed = stall.pop(0) if stall else (0.0, True)
        if seconds and not landed:
            self.api._log(chat, name, params, "timed out before taking effect")
            await asyncio.sleep(seconds)
            raise ApiError(502, "Bad Gateway")
        part = next((f for f in files if f.field == field_name), None)
        if part is None:
            problem = ("Bad Request: wrong file identifier/HTTP URL specified" if params.get(field_name)
                       else f"Bad Request: there is no {field_name} in the request")
            self._refuse(chat, name, params, ApiError(400, problem))
        assert part is not None
        if not part.data:
            self._refuse(chat, name, params, ApiError(400, "Bad Request: file must be non-empty"))
        caption = str(params.get("caption") or "")
        if utf16_units(caption.strip()) > MAX_CAPTION_UNITS:
            chat.violations.append(f"{name} with a caption of {utf16_units(caption.strip())} UTF-16 units")
            self._refuse(chat, name, params, ApiError(400, "Bad Request: message caption is too long"))
        if params.get("parse_mode"):
            chat.violations.append(f"{name} with parse_mode {params['parse_mode']!r}")
        if kind == "photo":
            self._check_photo(chat, name, params, part.data)
        filename = part.filename or field_name
        shown = SentMedia(kind, filename, caption.strip(), part.data, part.content_type)
        message = ScreenMessage(str(chat.next_message_id), shown.label, [shown.label], media=shown)
        chat.next_message_id += 1
        chat.messages.append(message)
        chat.uploads.append(shown)
        chat.draft = None
        thread = params.get("message_thread_id")
        chat.threads[message.id] = str(thread) if thread not in (None, "") else None
        self.api._log(chat, name, params, "ok")
        if seconds:
            await asyncio.sleep(seconds)  # it is on screen; the answer comes too late
        return self._message_json(chat, message, shown)

    def _check_photo(self, chat: "EmulatedChat", name: str, params: dict[str, Any], data: bytes) -> None:
        from .emulator import ApiError

        if len(data) > self.max_photo_bytes:
            chat.violations.append(f"{name} of {len(data)} bytes (photos: {self.max_photo_bytes} at most)")
            self._refuse(chat, name, params, ApiError(400, "Bad Request: PHOTO_SAVE_FILE_INVALID"))
        size = image_size(data)
        if size is None:
            self._refuse(chat, name, params, ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED"))
        assert size is not None
        width, height = size
        if width < 1 or height < 1 or width + height > 10000 or max(width, height) / min(width, height) > 20:
            self._refuse(chat, name, params, ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS"))

    def _refuse(self, chat: "EmulatedChat", name: str, params: dict[str, Any], error: Exception) -> None:
        self.api._log(chat, name, params, str(error))
        raise error

    def _message_json(self, chat: "EmulatedChat", message: ScreenMessage, shown: SentMedia) -> dict[str, Any]:
        body = self.api._message_json(chat, message)
        body.pop("text", None)
        body.pop("entities", None)
        if shown.caption:
            body["caption"] = shown.caption
        digest = hashlib.sha1(shown.data).hexdigest()
        file = {"file_id": f"{shown.kind}-{digest[:24]}", "file_unique_id": digest[:16], "file_size": len(shown.data)}
        if shown.kind == "photo":
            width, height = image_size(shown.data) or (1, 1)
            body["photo"] = [{**file, "width": width, "height": height}]
        elif shown.kind == "video":
            body["video"] = {**file, "width": 0, "height": 0, "duration": 0, "file_name": shown.filename,
                             "mime_type": shown.mime}
        elif shown.kind == "audio":
            body["audio"] = {**file, "duration": 0, "file_name": shown.filename, "mime_type": shown.mime}
        else:
            body["document"] = {**file, "file_name": shown.filename, "mime_type": shown.mime}
        return body


async def read_files(request: Any) -> list[UploadedFile]:
    """The file parts of a multipart body (aiohttp caches ``post()``, so the form fields stay readable)."""
    if not request.content_type.startswith("multipart/"):
        return []
    form = await request.post()
    found = []
    for key, value in form.items():
        if hasattr(value, "file") and hasattr(value, "filename"):
            found.append(UploadedFile(key, value.filename or "", value.content_type or "", value.file.read()))
    return found
