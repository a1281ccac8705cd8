"""Files people send the bot (photos, documents, voice notes, audio, video) as the core's ``Attachment`` values.

A Telegram message names its file by ``file_id`` only; the bytes take two
calls: ``getFile`` (which answers the file's path on the file server) and a
GET of ``<file_url><token>/<file_path>``. Both happen in the attachment's
``fetch``, which the core calls only for a message it keeps, so a duplicate,
an unknown user or an unmentioned group message downloads nothing.

The Bot API lets a bot download at most 20 MB per file (``getFile`` answers
"file is too big"); a file whose declared size is over that is refused with
a :class:`~hermes_gateway.FetchError` before any call. The download streams
in chunks (:func:`hermes_gateway.stream_download`): the plugin never holds a whole
file, nor hands over more than ``getFile`` declared.
The file URL carries the bot token, so no error here ever quotes it.

What each kind becomes (``getFile`` loses the name and the mime type, so
they come from the message):

* ``photo``: the largest size Telegram made (Telegram re-encodes photos as
  JPEG), kind ``image``;
* ``document``: kind ``document``, or ``image`` when its mime type is an
  image format (a screenshot sent "as a file" is still meant to be seen);
* ``voice``: kind ``voice`` (OGG/Opus; named ``voice.ogg``: transcription
  servers tell formats apart by the extension and refuse ``.oga``);
* ``audio``: kind ``audio``; ``video`` and ``video_note``: kind ``video``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, AsyncIterator, Callable, Literal

from hermes_gateway import Attachment, FetchError, stream_download

from .redaction import scrub


#: The most the Bot API lets a bot download per file (a local Bot API server lifts it; Telegram's does not).
DOWNLOAD_LIMIT = 20 * 1024 * 1024
#: Bytes per chunk handed to the core while a file downloads.
CHUNK_BYTES = 64 * 1024
#: Image formats a document may carry that a person means to be seen (the rest stay documents).
IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


#: The attachment kinds a Telegram message's files become (``hermes_gateway.Attachment.kind``).
Kind = Literal["image", "voice", "audio", "video", "document"]


@dataclass(frozen=True)
class FileRef:
    """One file a message carries, as the message describes it."""

    file_id: str
    kind: Kind
    mime: str | None
    size: int | None
    filename: str | None


def file_refs(message: Any) -> list[FileRef]:
    """The files in a python-telegram-bot ``Message`` (none for text, stickers, locations...)."""
    found: list[FileRef] = []
    if message.photo:
        largest = max(message.photo, key=lambda p: (p.width * p.height, p.file_size or 0))
        found.append(FileRef(largest.file_id, "image", "image/jpeg", largest.file_size, "photo.jpg"))
    document = message.document
    if document is not None:
        kind: Kind = "image" if document.mime_type in IMAGE_MIMES else "document"
        found.append(FileRef(document.file_id, kind, document.mime_type, document.file_size, document.file_name))
    if message.voice is not None:
        voice = message.voice
        found.append(FileRef(voice.file_id, "voice", voice.mime_type or "audio/ogg", voice.file_size, "voice.ogg"))
    if message.audio is not None:
        audio = message.audio
        found.append(FileRef(audio.file_id, "audio", audio.mime_type, audio.file_size, audio.file_name))
    if message.video is not None:
        video = message.video
        found.append(FileRef(video.file_id, "video", video.mime_type or "video/mp4", video.file_size,
                             video.file_name))
    if message.video_note is not None:
        note = message.video_note
        found.append(FileRef(note.file_id, "video", "video/mp4", note.file_size, "video_note.mp4"))
    return found


class FileDownloads:
    """Builds the attachments of one bot's messages, and downloads their files when the core asks.

    ``bot`` and ``http`` are looked up per download: the bot is built on first
    use, and the HTTP session belongs to the client (closed with it).
    """

    def __init__(self, bot: Callable[[], Any], http: Callable[[], Any], *, limit: int = DOWNLOAD_LIMIT) -> None:
        self._bot = bot
        self._http = http
        self.limit = limit

    def attachments(self, message: Any) -> tuple[Attachment, ...]:
        """The message's files, each with a lazy ``fetch`` (nothing is downloaded here)."""
        return tuple(Attachment(ref.kind, _once(partial(self.download, ref)), mime=ref.mime, size=ref.size,
                                filename=ref.filename) for ref in file_refs(message))

    async def download(self, ref: FileRef) -> AsyncIterator[bytes]:
        """``getFile``, then the file's bytes in chunks; :class:`FetchError` when Telegram will not hand it over."""
        if ref.size is not None and ref.size > self.limit:
            raise FetchError(_too_big(ref.size, self.limit))
        from telegram import error as tg

        try:
            file = await self._bot().get_file(ref.file_id)
        except tg.BadRequest as exc:
            if "too big" in str(exc).lower():
                raise FetchError(_too_big(ref.size, self.limit)) from None
            raise FetchError(scrub(f"Telegram refused the file: {exc}")) from None
        except tg.TelegramError as exc:
            raise FetchError(scrub(f"Telegram could not look up the file ({type(exc).__name__}: {exc})")) from None
        if file.file_size is not None and file.file_size > self.limit:
            raise FetchError(_too_big(file.file_size, self.limit))
        url = file.file_path
        if not url:
            raise FetchError("Telegram gave no path for the file (it may have expired)")
        # never more than getFile declared, nor than a bot may download; errors never quote the URL (it holds
        # the token)
        async for chunk in stream_download(self._http(), url, what="the file from Telegram", max_bytes=self.limit,
                                           declared_size=file.file_size, chunk_bytes=CHUNK_BYTES):
            yield chunk


def _too_big(size: int | None, limit: int) -> str:
    shown = f"{size / 1_048_576:.1f} MB" if size is not None else "over 20 MB"
    return f"the file is too large for a bot to download from Telegram ({shown}; bots get at most " \
           f"{limit // 1_048_576} MB per file)"


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
