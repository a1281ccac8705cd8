"""Sending a reply's media as Telegram attachments (the ``on_media`` hook's work).

Each item is one Bot API call through python-telegram-bot, chosen by what
Telegram shows natively: an image is ``sendPhoto`` (at most 10 MB), a
video ``sendVideo`` when it is MP4 (Telegram's clients play only that), an
audio file ``sendAudio`` when it is MP3 or M4A (the formats the Bot API
lists for the music player), and everything else ``sendDocument`` (50 MB).
The caption goes as plain text (no ``parse_mode``: a tool's caption is not
Markdown, and a plain caption cannot fail to parse).

Failures are the plugin's usual translation (:func:`.errors.translate`),
with two upload-specific corrections:

* a body over 50 MB is answered by nginx with ``413 Request Entity Too
  Large`` (HTML, not JSON), which python-telegram-bot raises as a
  ``NetworkError`` — retryable for text, but an upload that is too large
  stays too large: it fails for good here (the core shows the item's line);
* a photo Telegram will not take as a photo (``PHOTO_INVALID_DIMENSIONS``:
  width + height over 10000 or a ratio over 20; ``IMAGE_PROCESS_FAILED``)
  is sent once more as a file, in the same hook call: the refusal means
  nothing was shown, and the file is what the person would want.

A timeout while the body was still being written (httpx ``WriteTimeout``)
cannot have landed; any later timeout may have (``maybe_delivered``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from hermes_gateway import DeliveryError, Media, MediaLimits, MessageRef, Stream

from .redaction import scrub

if TYPE_CHECKING:
    from .client import TelegramClient

log = logging.getLogger(__name__)

#: The standard Bot API's limits (https://core.telegram.org/bots/api#sendphoto, #senddocument):
#: photos 10 MB, any other file 50 MB; captions 0-1024 characters after entity parsing (UTF-16 units).
#: Declared in decimal megabytes: the safe reading of "MB".
PHOTO_MAX_BYTES = 10_000_000
FILE_MAX_BYTES = 50_000_000
CAPTION_UNITS = 1024
LIMITS = MediaLimits(
    kinds=frozenset({"image", "video", "audio", "document"}),
    max_bytes={"image": PHOTO_MAX_BYTES, "default": FILE_MAX_BYTES},
    caption_length=CAPTION_UNITS,
)
#: Seconds an upload may take (writing the body, then waiting for the answer); python-telegram-bot's
#: own defaults (5 s read, 20 s media write) are meant for text and small files.
UPLOAD_TIMEOUT = 60.0
#: What sendVideo / sendAudio take; other videos and sounds go as files.
VIDEO_MIMES = frozenset({"video/mp4"})
AUDIO_MIMES = frozenset({"audio/mpeg", "audio/mp3", "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/aac"})
#: A photo refused as a photo that Telegram takes as a file.
NOT_A_PHOTO = ("photo_invalid_dimensions", "image_process_failed", "photo_save_file_invalid")


def method_for(media: Media) -> str:
    """The Bot API method that shows ``media`` best: sendPhoto, sendVideo, sendAudio or sendDocument."""
    if media.kind == "image":
        return "sendPhoto"
    if media.kind == "video" and media.mime in VIDEO_MIMES:
        return "sendVideo"
    if media.kind == "audio" and media.mime in AUDIO_MIMES:
        return "sendAudio"
    return "sendDocument"


async def send(client: "TelegramClient", stream: Stream, media: Media) -> MessageRef:
    """Upload ``media`` into the stream's chat as one message; its ref, or the core's kind of error."""
    from .client import _quote, _thread

    if media.path is None:  # the core hands over files only (LIMITS.urls is False)
        raise DeliveryError(f"telegram: {media.filename} has no file to upload", retryable=False)
    data = await asyncio.to_thread(media.read)
    method = method_for(media)
    timeout = client.upload_timeout

    async def upload(chat_id: str) -> Any:
        nonlocal method
        try:
            return await _call(client, method, chat_id, data, media, thread=_thread(stream),
                               reply=_quote(stream), timeout=timeout)
        except Exception as exc:
            if method == "sendPhoto" and _not_a_photo(exc):
                log.info("telegram: %s: %s refused as a photo (%s); sending it as a file",
                         stream.chat_id, media.filename, scrub(str(exc))[:120])
                method = "sendDocument"
                try:
                    return await _call(client, method, chat_id, data, media, thread=_thread(stream),
                                       reply=_quote(stream), timeout=timeout)
                except Exception as again:
                    _raise_corrected(again, method)
                    raise
            _raise_corrected(exc, method)
            raise

    chat_id, message = await client._into_chat(stream, method, upload)
    stream.state["quoted"] = True
    return MessageRef(str(chat_id), str(message.message_id), stream.thread_id)


async def _call(client: "TelegramClient", method: str, chat_id: str, data: bytes, media: Media, *,
                thread: int | None, reply: Any, timeout: float) -> Any:
    bot = client.bot
    send_file = {"sendPhoto": (bot.send_photo, "photo"), "sendVideo": (bot.send_video, "video"),
                 "sendAudio": (bot.send_audio, "audio"), "sendDocument": (bot.send_document, "document")}
    call, field = send_file[method]
    return await call(chat_id, **{field: data}, filename=media.filename, caption=media.caption or None,
                      message_thread_id=thread, reply_parameters=reply,
                      read_timeout=timeout, write_timeout=timeout)


def _not_a_photo(exc: BaseException) -> bool:
    from telegram import error as tg

    return isinstance(exc, tg.BadRequest) and any(code in str(exc).lower() for code in NOT_A_PHOTO)


def _raise_corrected(exc: BaseException, method: str) -> None:
    """Raise the upload's own translation, if it has one (else the caller re-raises ``exc`` untouched:
    :func:`.errors.translate` reads its ``__cause__``)."""
    error = _upload_error(exc, method)
    if error is not None:
        raise error from None


def _upload_error(exc: BaseException, method: str) -> DeliveryError | None:
    """The corrections to :func:`.errors.translate` for uploads; None: the usual translation applies."""
    from telegram import error as tg

    if isinstance(exc, tg.NetworkError) and not isinstance(exc, (tg.BadRequest, tg.TimedOut)) \
            and ("413" in str(exc) or "too large" in str(exc).lower()):
        return DeliveryError(f"telegram {method}: the file is too large for the Bot API (413 Request Entity "
                             "Too Large)", retryable=False)
    if isinstance(exc, tg.TimedOut) and type(exc.__cause__).__name__ == "WriteTimeout":
        return DeliveryError(f"telegram {method}: the upload timed out before it was sent whole", retryable=True)
    return None
