"""Files in and out of Matrix: ``mxc://`` downloads built lazily, uploads followed by one ``m.room.message``.

In: a person's ``m.image``/``m.file``/``m.audio``/``m.video`` becomes an
``Attachment`` whose ``fetch`` GETs the authenticated media path
(``/_matrix/client/v1/media/download/{server}/{id}``, Matrix 1.11: Synapse
serves new media only there) with the bot's token, streamed and bounded by
:func:`hermes_gateway.stream_download`; nothing is downloaded until the core
asks (never for a message it drops). Out: ``POST /_matrix/media/v3/upload``
returns an ``mxc://`` URI, then one event points at it. The URI is kept per
reply (``stream.state``), so an event refused with a 429 is sent again
without a second upload.
"""

from __future__ import annotations

import re
from typing import Any, Callable
from urllib.parse import quote

from hermes_gateway import Attachment, Media, MediaLimits, stream_download

#: Synapse's default ``max_upload_size`` (50M); a server configured lower answers 413, shown as one line.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
LIMITS = MediaLimits(kinds=frozenset({"image", "document", "audio", "video"}),
                     max_bytes={kind: MAX_UPLOAD_BYTES for kind in ("image", "document", "audio", "video")},
                     caption_length=4000)
#: The core's kind → ``msgtype``.
MSGTYPES = {"image": "m.image", "document": "m.file", "audio": "m.audio", "video": "m.video"}
MXC = re.compile(r"^mxc://([A-Za-z0-9.:\[\]-]+)/([A-Za-z0-9_-]+)$")


def download_url(homeserver: str, mxc: str) -> str | None:
    """The authenticated download URL of an ``mxc://server/id`` URI (None when it is not one)."""
    match = MXC.match(mxc)
    if match is None:
        return None
    return f"{homeserver}/_matrix/client/v1/media/download/{quote(match[1], safe='')}/{match[2]}"


def attachment_maker(connection: Callable[[], Any], homeserver: str,
                     max_bytes: int = MAX_UPLOAD_BYTES) -> Callable[[str, dict[str, Any]], Attachment]:
    """``make(kind, content)``: the lazy ``Attachment`` of a file event's content (downloaded when fetched
    through ``connection()``, the client's logged-in mautrix API, None once it is closed)."""

    def make(kind: str, content: dict[str, Any]) -> Attachment:
        info: dict[str, Any] = content["info"] if isinstance(content.get("info"), dict) else {}
        size = info.get("size")
        size = size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None
        mime = info.get("mimetype") if isinstance(info.get("mimetype"), str) else ""
        name = content.get("filename") if isinstance(content.get("filename"), str) else content.get("body")
        name = name if isinstance(name, str) and name else "file"
        url = download_url(homeserver, str(content.get("url")))
        if kind == "audio" and "org.matrix.msc3245.voice" in content:
            kind = "voice"

        async def fetch() -> Any:
            from hermes_gateway import FetchError

            if url is None:
                raise FetchError(f"matrix: the file {name[:80]!r} has no valid mxc:// address")
            api = connection()
            if api is None:
                raise FetchError(f"matrix: the file {name[:80]!r} cannot be fetched: the client is closed")
            async for chunk in stream_download(api.api.session, url, what=f"matrix: the file {name[:80]!r}",
                                               declared_size=size, max_bytes=max_bytes,
                                               headers={"Authorization": f"Bearer {api.api.token}"},
                                               status_notes={404: "the homeserver no longer has it"}):
                yield chunk

        return Attachment(kind, fetch, mime=mime, size=size, filename=name[:255])  # type: ignore[arg-type]

    return make


def file_content(media: Media, mxc: str) -> dict[str, Any]:
    """The ``m.room.message`` content of an uploaded file: its ``msgtype``, caption and ``info``."""
    kind = media.kind or "document"
    content: dict[str, Any] = {"msgtype": MSGTYPES.get(kind, "m.file"), "url": mxc,
                               "body": media.caption or media.filename, "filename": media.filename,
                               "info": {"mimetype": media.mime or "application/octet-stream",
                                        "size": media.size or 0},
                               "m.mentions": {}}
    if kind == "audio" and media.voice:
        content["org.matrix.msc3245.voice"] = {}
    return content
