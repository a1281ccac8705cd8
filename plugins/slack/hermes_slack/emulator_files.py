"""The Slack emulator's shared files: what people upload, served at ``url_private`` to the bot token only.

Kept apart from :mod:`.emulator` (Web API, Socket Mode, the bot's uploads).
As Slack does it: a message sharing files is a ``message`` event with
``subtype: file_share`` and a ``files`` list, each file an object with
``id``, ``name``, ``title``, ``mimetype``, ``filetype``, ``size``, ``mode``,
``url_private`` (``/files-pri/{team}-{id}/{name}``) and
``url_private_download`` (``…/download/{name}``); an audio clip recorded in
Slack has ``subtype: slack_audio``. Fetching either URL needs
``Authorization: Bearer`` with the bot token of an app with ``files:read``;
without it Slack answers **HTTP 200 with its sign-in page** (HTML), not a
401, and so does the emulator. A Slack Connect file can come held back
(``file_access: check_file_info``: only its id); ``files.info`` then has the
whole object.

Every request for a file is one :class:`Download` in :attr:`SharedFiles.downloads`
(served or not), so a test asserts that a message the core dropped downloaded
nothing. A file declared larger than its bytes (a too-large file) is served
as zeros up to the declared size, chunk by chunk: the emulator never holds it.
"""

from __future__ import annotations

import mimetypes
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web

from hermes_gateway.testing import samples, serve_file

if TYPE_CHECKING:
    from .emulator import SlackEmulator

SIGN_IN_PAGE = ("<!DOCTYPE html><html><head><title>Slack</title></head><body>"
                "<h1>Sign in to your workspace</h1></body></html>")


@dataclass(frozen=True)
class PersonFile:
    """A file a person shares in the emulator.

    ``mimetype`` None: guessed from the file name. ``declared_size`` above
    ``len(data)``: a file that large, served as ``data`` then zeros (never
    held); below it: Slack's size is wrong and more is sent than declared.
    ``chunked``: served without a ``Content-Length``. ``stall``: seconds of
    silence after the first chunk. ``subtype``: ``slack_audio`` for an audio clip. ``mode``: ``hosted``, or
    ``tombstone``/``hidden_by_limit``/``external`` (no URL to download).
    ``held_back``: sent as a Slack Connect file (``file_access: check_file_info``).
    """

    filename: str
    data: bytes = b""
    mimetype: str | None = None
    declared_size: int | None = None
    chunked: bool = False
    stall: float = 0.0
    subtype: str | None = None
    mode: str = "hosted"
    held_back: bool = False

    @property
    def size(self) -> int:
        return self.declared_size if self.declared_size is not None else len(self.data)

    @property
    def served_size(self) -> int:
        """How many bytes are served: the declared size when larger (zeros after the data), else the data."""
        return max(self.size, len(self.data))

    @property
    def mime(self) -> str:
        return self.mimetype or mimetypes.guess_type(self.filename)[0] or "application/octet-stream"


def photo(width: int = 64, height: int = 48, name: str = "photo.png") -> PersonFile:
    """A PNG photo (:func:`hermes_gateway.testing.samples.png`)."""
    return PersonFile(name, samples.png(width, height), "image/png")


def pdf(text: str = "Hello from the PDF", name: str = "report.pdf") -> PersonFile:
    """A one-page PDF showing ``text``."""
    return PersonFile(name, samples.pdf(text), "application/pdf")


def voice_note(seconds: float = 1.0) -> PersonFile:
    """An audio clip recorded in Slack (``subtype: slack_audio``).

    Slack's own clips are WebM or MP4 containers; the emulator's is the Ogg
    Opus voice note every platform's tests share (the core converts
    whichever container it gets).
    """
    return PersonFile("audio_message.ogg", samples.voice_ogg(seconds), "audio/ogg", subtype="slack_audio")


def too_large(size: int = 2 * 1024 * 1024 * 1024 - 1, name: str = "huge.mp4") -> PersonFile:
    """A file declared ``size`` bytes (just under 2 GiB: over any limit); the emulator never holds it."""
    return PersonFile(name, b"", "video/mp4", declared_size=size)


@dataclass(frozen=True)
class Download:
    """One request for a shared file: which, whether the bot token came with it, what was answered."""

    file_id: str
    filename: str
    status: int
    authorized: bool
    sent: int = 0          # bytes of the file sent (0 for the sign-in page or an error)


@dataclass
class Posted:
    """A file shared in a message: its object as events carry it, and whether it still exists."""

    file_id: str
    file: PersonFile
    user: str
    deleted: bool = False


class SharedFiles:
    """The files people shared in one :class:`~.emulator.SlackEmulator` (it owns one of these, as ``api.shared``)."""

    def __init__(self, api: "SlackEmulator") -> None:
        self.api = api
        #: Every file shared so far, by file id.
        self.posted: dict[str, Posted] = {}
        #: Every request for a file, in order.
        self.downloads: list[Download] = []
        #: Whether the app was granted ``files:read`` (without it, the bot token gets the sign-in page too).
        self.files_read = True

    def add(self, file: PersonFile, user: str) -> dict[str, Any]:
        """Share ``file`` as ``user``; returns the file object the message event carries."""
        file_id = f"F0{self.api._run}{next(self.api._ids):06d}"
        self.posted[file_id] = Posted(file_id, file, user)
        if file.held_back:
            return {"id": file_id, "mode": "file_access", "file_access": "check_file_info", "created": 0,
                    "timestamp": 0, "user": ""}
        return self.info(file_id)

    def info(self, file_id: str) -> dict[str, Any]:
        """The whole file object (what ``files.info`` answers)."""
        posted = self.posted[file_id]
        file = posted.file
        base = f"http://127.0.0.1:{self.api.port}/files-pri/{self.api.team_id}-{file_id}"
        body: dict[str, Any] = {
            "id": file_id, "created": int(time.time()), "timestamp": int(time.time()), "name": file.filename,
            "title": file.filename, "mimetype": file.mime, "filetype": file.filename.rsplit(".", 1)[-1].lower(),
            "pretty_type": file.filename.rsplit(".", 1)[-1].upper(), "user": posted.user,
            "user_team": self.api.team_id, "editable": False, "size": file.size, "mode": file.mode,
            "is_external": file.mode == "external", "external_type": "gdrive" if file.mode == "external" else "",
            "is_public": False, "public_url_shared": False, "display_as_bot": False, "username": "",
        }
        if file.subtype:
            body["subtype"] = file.subtype
        if file.mode == "external":
            body["url_private"] = f"https://docs.google.com/document/d/{file_id}"
        elif file.mode == "hosted":
            body["url_private"] = f"{base}/{quote(file.filename)}"
            body["url_private_download"] = f"{base}/download/{quote(file.filename)}"
            body["permalink"] = f"https://hermes.slack.com/files/{posted.user}/{file_id}/{quote(file.filename)}"
        return body

    def delete(self, file_id: str) -> None:
        """The person deletes the file: its URLs answer 404."""
        self.posted[file_id].deleted = True

    def downloaded(self, filename: str | None = None) -> list[Download]:
        """The requests that were served the file (with the bot token), of one file name or of all."""
        return [d for d in self.downloads if d.status == 200 and d.authorized
                and (filename is None or d.filename == filename)]

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/files-pri/{team_file}/{name}", self.handle)
        app.router.add_get("/files-pri/{team_file}/download/{name}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``GET`` a file's ``url_private``: the bytes for the bot token with ``files:read``, else the sign-in page."""
        team, _, file_id = request.match_info["team_file"].partition("-")
        posted = self.posted.get(file_id)
        name = request.match_info["name"]
        authorized = (request.headers.get("Authorization") == f"Bearer {self.api.bot_token}" and self.files_read)
        if posted is None or team != self.api.team_id or posted.deleted or posted.file.filename != name:
            self.downloads.append(Download(file_id, posted.file.filename if posted else name, 404, authorized))
            return web.Response(status=404, text="file not found")
        file = posted.file
        if not authorized:  # Slack's way: 200 and the sign-in page, never a 401
            self.downloads.append(Download(file_id, file.filename, 200, False))
            return web.Response(status=200, text=SIGN_IN_PAGE, content_type="text/html")
        return await serve_file(request, file.data, size=file.served_size, chunked=file.chunked, stall=file.stall,
                                content_type=file.mime,
                                sent=lambda n: self.downloads.append(Download(file_id, file.filename, 200, True, n)))
