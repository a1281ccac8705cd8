"""Files users send the business number (photos, documents, voice notes, audio, video, stickers) as ``Attachment``.

A media message carries a media id, a mime type and the file's SHA-256;
the bytes take two calls, both with the access token in the
``Authorization`` header: ``GET /{media-id}`` answers a short-lived URL and
the file's size, and a GET of that URL streams the file. Both happen in the
attachment's ``fetch``, which the core calls only for a message it keeps,
so a redelivered message, an unknown user or a dropped message downloads
nothing.

The webhook does not say how large a file is; the lookup does. A file over
what WhatsApp lets anyone send of its type (Meta's media limits: images
5 MB, audio and video 16 MB, documents 100 MB, stickers 500 KB) is refused
with a :class:`~hermes_gateway.FetchError` before the download starts.
The download streams in chunks (:func:`hermes_gateway.stream_download`), never
held whole here nor more than the lookup declared, and its SHA-256 is computed
as it goes and compared with the one the webhook announced: a difference is one warning in the log, not a refusal —
Meta documents the hash as "the media file's" without saying more, and this
has not been checked against the real API, so a strict check could refuse
every file; a file that is really damaged fails where it is decoded.

What each type becomes: ``image`` an image, ``document`` a document (an
image when its mime type is a picture format), ``audio`` a ``voice``
attachment when WhatsApp marks it a recorded voice note (named
``voice.ogg``: transcription servers tell formats apart by the extension),
else ``audio``; ``video`` a video; ``sticker`` a sticker (WebP).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from typing import TYPE_CHECKING, AsyncIterator, Callable, Literal

from hermes_gateway import Attachment, DeliveryError, FetchError, RateLimited

from .redaction import scrub
from .webhook import MediaRef, Message

if TYPE_CHECKING:
    from .graph import GraphClient

log = logging.getLogger(__name__)

MB = 1024 * 1024
#: The most WhatsApp lets a person send of each type (the larger, binary reading of Meta's "MB").
DOWNLOAD_LIMITS = {"image": 5 * MB, "audio": 16 * MB, "video": 16 * MB, "document": 100 * MB,
                   "sticker": 500 * 1024}
CHUNK_BYTES = 64 * 1024
#: Image formats a document may carry that a person means to be seen.
IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/webp"})
#: A file name for each kind when the message names none (documents carry their own), with the extension
#: of its mime type; a voice note is always ``voice.ogg``.
DEFAULT_STEMS = {"image": "image", "audio": "audio", "video": "video", "sticker": "sticker", "document": "document"}
EXTENSIONS = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "audio/ogg": ".ogg",
              "audio/opus": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/aac": ".aac",
              "audio/amr": ".amr", "video/mp4": ".mp4", "video/3gpp": ".3gp", "application/pdf": ".pdf",
              "text/plain": ".txt"}


#: The attachment kinds a WhatsApp media message becomes (``hermes_gateway.Attachment.kind``).
Kind = Literal["image", "voice", "audio", "video", "document", "sticker"]

#: Each media message type (``webhook.MEDIA_TYPES``) as its attachment kind, before the two refinements below.
_KINDS: dict[str, Kind] = {"image": "image", "audio": "audio", "video": "video", "document": "document",
                           "sticker": "sticker"}


def kind_of(message: Message) -> Kind:
    """The attachment kind of a media message (one of ``webhook.MEDIA_TYPES``)."""
    media = message.media
    if message.kind == "audio":
        return "voice" if media is not None and media.voice else "audio"
    if message.kind == "document" and media is not None and media.mime in IMAGE_MIMES:
        return "image"
    return _KINDS[message.kind]


def default_name(kind: str, mime: str | None) -> str:
    """``voice.ogg``, ``image.png``, ``video.mp4`` ...: a name for a file the message does not name."""
    if kind == "voice":
        return "voice.ogg"
    base = (mime or "").split(";", 1)[0].strip().lower()
    return DEFAULT_STEMS.get(kind, "file") + EXTENSIONS.get(base, "")


class MediaDownloads:
    """Builds the attachments of media messages and downloads their files when the core asks."""

    def __init__(self, graph: Callable[[], "GraphClient"]) -> None:
        self._graph = graph  # looked up per download: the client's session is built on first use

    def attachment(self, message: Message) -> Attachment:
        """The message's file with a lazy ``fetch`` (nothing is downloaded here)."""
        media = message.media
        assert media is not None
        kind = kind_of(message)
        filename = media.filename or default_name(kind, media.mime)
        mime = media.mime.split(";", 1)[0].strip().lower() if media.mime else None  # "audio/ogg; codecs=opus"
        return Attachment(kind, _once(lambda: self.download(media, message.kind)), mime=mime or None,
                          filename=filename)

    async def download(self, media: MediaRef, kind: str) -> AsyncIterator[bytes]:
        """The lookup, then the file's bytes in chunks; :class:`FetchError` when WhatsApp will not hand it over."""
        graph = self._graph()
        try:
            info = await graph.media_info(media.media_id)
        except (DeliveryError, RateLimited) as exc:
            raise FetchError(scrub(f"WhatsApp would not give the file: {exc}")) from None
        url, size = info.get("url"), info.get("file_size")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise FetchError("WhatsApp's media lookup gave no download URL")
        limit = DOWNLOAD_LIMITS.get(kind, DOWNLOAD_LIMITS["document"])
        if isinstance(size, int) and size > limit:
            article = "an" if kind[0] in "aeiou" else "a"
            raise FetchError(f"the file is too large: {size / MB:.1f} MB, and WhatsApp allows at most "
                             f"{limit / MB:g} MB for {article} {kind}")
        expected = _digest(media.sha256 or info.get("sha256"))
        checksum = hashlib.sha256()
        size = size if isinstance(size, int) else None
        async for chunk in graph.download(url, what=f"whatsapp: the {kind}", max_bytes=limit, declared_size=size):
            checksum.update(chunk)
            yield chunk
        if expected is not None and checksum.digest() != expected:
            log.warning("whatsapp: media %s: the downloaded file's SHA-256 is not the one the webhook announced "
                        "(passed on anyway)", media.media_id)


def _digest(value: object) -> bytes | None:
    """Meta's ``sha256`` as bytes: hex in the webhook, sometimes base64; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        if len(value) == 64:
            return bytes.fromhex(value)
        decoded = base64.b64decode(value, validate=True)
        return decoded if len(decoded) == 32 else None
    except (ValueError, binascii.Error):
        return None


def _once(fetch: Callable[[], AsyncIterator[bytes]]) -> Callable[[], AsyncIterator[bytes]]:
    """``fetch`` that refuses a second call: a file is downloaded once, by the core."""
    called = False

    def fetch_once() -> AsyncIterator[bytes]:
        nonlocal called
        if called:
            raise FetchError("this attachment was already fetched")
        called = True
        return fetch()

    return fetch_once
