"""The Discord emulator's CDN: files people attach, served by signed links, every download logged.

Kept apart from :mod:`.emulator` (text, buckets, gateway) and
:mod:`.emulator_media` (the bot's uploads). As Discord does it: a message's
``attachments`` each carry ``id``, ``filename``, ``size``, ``content_type``
(left out when a test says so, as some clients' uploads have none),
``url`` and ``proxy_url``; a voice message has ``duration_secs`` and
``waveform`` and the message flag ``IS_VOICE_MESSAGE``. The ``url`` is a
signed CDN link, ``/attachments/{channel}/{id}/{filename}?ex=…&is=…&hm=…``:
no token is needed, a link whose signature does not match or that expired
answers 404 ("This content is no longer available."), as Discord's CDN does.

Every request for a file is one :class:`Download` in :attr:`CdnFiles.downloads`
(served or refused), so a test asserts that a message the core dropped
downloaded nothing. A file declared larger than its bytes (a too-large
file) is served as zeros up to the declared size, chunk by chunk: the
emulator never holds it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import mimetypes
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web

from hermes_gateway.testing import samples, serve_file

if TYPE_CHECKING:
    from .emulator import DiscordEmulator

#: Discord's message flag for a voice message (recorded in the app).
IS_VOICE_MESSAGE = 1 << 13
#: How long a signed link lasts on Discord (about a day).
LINK_LIFETIME = 24 * 3600


@dataclass(frozen=True)
class PersonFile:
    """A file a person attaches to a message in the emulator.

    ``content_type`` None: guessed from the file name; ``""``: left out of the
    payload. ``declared_size`` above ``len(data)``: a file that large, served
    as ``data`` then zeros (never held); below it: Discord's size is wrong
    and the CDN sends more than declared. ``chunked``: served without a
    ``Content-Length``. ``stall``: seconds of silence after the first chunk.
    ``voice``: a voice message (OGG/Opus, with a waveform).
    """

    filename: str
    data: bytes = b""
    content_type: str | None = None
    declared_size: int | None = None
    chunked: bool = False
    stall: float = 0.0
    voice: bool = False

    @property
    def size(self) -> int:
        return self.declared_size if self.declared_size is not None else len(self.data)

    @property
    def served_size(self) -> int:
        """How many bytes the CDN sends: the declared size when larger (zeros after the data), else the data."""
        return max(self.size, len(self.data))

    @property
    def mime(self) -> str | None:
        if self.content_type is not None:
            return self.content_type or None
        return mimetypes.guess_type(self.filename)[0] or "application/octet-stream"


def photo(width: int = 64, height: int = 48, name: str = "photo.png") -> PersonFile:
    """A PNG photo (:func:`hermes_gateway.testing.samples.png`)."""
    return PersonFile(name, samples.png(width, height), "image/png")


def pdf(text: str = "Hello from the PDF", name: str = "report.pdf") -> PersonFile:
    """A one-page PDF showing ``text``."""
    return PersonFile(name, samples.pdf(text), "application/pdf")


def voice_note(seconds: float = 1.0) -> PersonFile:
    """A voice message as the Discord app records it: ``voice-message.ogg``, OGG/Opus."""
    return PersonFile("voice-message.ogg", samples.voice_ogg(seconds), "audio/ogg", voice=True)


def too_large(size: int = 600 * 1024 * 1024, name: str = "huge.mp4") -> PersonFile:
    """A file declared ``size`` bytes (600 MiB: over any limit); the emulator never holds it."""
    return PersonFile(name, b"", "video/mp4", declared_size=size)


@dataclass(frozen=True)
class Download:
    """One request for a file on the CDN: which attachment, how it was answered, how many bytes went out."""

    attachment_id: str
    filename: str
    status: int
    sent: int = 0


@dataclass
class Posted:
    """A file attached to a message: where it is, its signed ``url``, and whether its link still works."""

    channel_id: str
    attachment_id: str
    file: PersonFile
    expires: int
    url: str = ""
    gone: bool = False


class CdnFiles:
    """The files of one :class:`~.emulator.DiscordEmulator` (it owns one of these, as ``api.cdn``)."""

    def __init__(self, api: "DiscordEmulator") -> None:
        self.api = api
        self._key = secrets.token_bytes(16)
        #: Every file attached so far, by attachment id.
        self.posted: dict[str, Posted] = {}
        #: Every request for a file, in order.
        self.downloads: list[Download] = []

    def add(self, channel_id: str, file: PersonFile) -> dict[str, Any]:
        """Store ``file`` as attached in ``channel_id``; returns its attachment JSON for MESSAGE_CREATE."""
        attachment_id = self.api.snowflake()
        stored = Posted(str(channel_id), attachment_id, file, int(time.time()) + LINK_LIFETIME)
        self.posted[attachment_id] = stored
        path = _path(stored)
        stored.url = url = f"http://127.0.0.1:{self.api.port}{path}?{self._signature(path, stored.expires)}"
        body: dict[str, Any] = {"id": attachment_id, "filename": file.filename, "size": file.size, "url": url,
                                "proxy_url": url.replace("/attachments/", "/media/attachments/", 1)}
        if file.mime is not None:
            body["content_type"] = file.mime
        if file.voice:
            body["duration_secs"] = 1.0
            body["waveform"] = base64.b64encode(bytes(range(0, 256, 4))).decode()
        return body

    def expire(self, attachment_id: str) -> None:
        """The attachment's link stops working (its message was deleted, or a day went by)."""
        self.posted[attachment_id].gone = True

    def downloaded(self, filename: str | None = None) -> list[Download]:
        """The downloads served (HTTP 200), of one file name or of all."""
        return [d for d in self.downloads if d.status == 200 and (filename is None or d.filename == filename)]

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/attachments/{channel}/{id}/{name}", self.handle)
        app.router.add_get("/media/attachments/{channel}/{id}/{name}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``GET`` a file by its signed link: 404 unless the signature matches and has not expired."""
        stored = self.posted.get(request.match_info["id"])
        if stored is None or stored.channel_id != request.match_info["channel"]:
            return self._refused(request, None, 404)
        expected = dict(part.split("=", 1) for part in self._signature(_path(stored), stored.expires).split("&"))
        given = {k: request.query.get(k, "") for k in expected}
        if stored.gone or not all(hmac.compare_digest(given[k], v) for k, v in expected.items()) \
                or int(expected["ex"], 16) < time.time():
            return self._refused(request, stored, 404)
        file = stored.file
        return await serve_file(request, file.data, size=file.served_size, chunked=file.chunked, stall=file.stall,
                                content_type=file.mime or "application/octet-stream",
                                headers={"Cache-Control": "public, max-age=31536000"},
                                sent=lambda n: self.downloads.append(Download(stored.attachment_id, file.filename,
                                                                              200, n)))

    def _refused(self, request: web.Request, stored: Posted | None, status: int) -> web.Response:
        self.downloads.append(Download(request.match_info["id"], stored.file.filename if stored else
                                       request.match_info["name"], status))
        return web.Response(status=status, text="This content is no longer available.")

    def _signature(self, path: str, expires: int) -> str:
        issued = expires - LINK_LIFETIME
        digest = hmac.new(self._key, f"{path}|{expires:x}|{issued:x}".encode(), hashlib.sha256).hexdigest()
        return f"ex={expires:x}&is={issued:x}&hm={digest}"


def _path(stored: Posted) -> str:
    return f"/attachments/{stored.channel_id}/{stored.attachment_id}/{quote(stored.file.filename)}"
