"""Attachments on WhatsApp: upload the file to ``/{phone_number_id}/media``, then send a media message.

What the Cloud API takes (Meta's "supported media types"), and so what
:data:`LIMITS` declares to the core:

* ``image``: JPEG or PNG, up to 5 MB, caption up to 1024 characters;
* ``video``: MP4 or 3GPP, up to 16 MB, caption;
* ``audio``: AAC, MP4 audio, MPEG, AMR, OGG/Opus, up to 16 MB, **no caption**;
* ``document``: up to 100 MB, caption and a file name the phone shows.

The core already sorted the item by kind and size; here the mime type picks
the WhatsApp message type. An item whose kind WhatsApp would show natively
but whose format it does not play (a WebP picture, an audio file with a
caption to keep) goes as a ``document``: the person still gets the file, and
the words. A format Meta's upload refuses altogether (a GIF, a ZIP) fails for
good without a call, so the core shows its one-line fallback.

Exactly once: the upload shows nothing, so a lost upload answer is retried
(a new upload; the orphan expires at Meta). Only the media message can land
unseen, and a timeout there reaches the core as ``maybe_delivered``. When
the message is refused for a while (a 429, Meta's trouble), the core calls
again and the media id of the first upload is reused (kept in the reply's
``stream.state``), so the file is not uploaded twice.
"""

from __future__ import annotations

import asyncio

from hermes_gateway import DeliveryError, Media, MediaLimits, MessageRef, Stream

from .graph import GraphClient

MB = 1_000_000
#: Meta's per-type limits (decimal megabytes: the smaller reading of "5 MB", so nothing near it is refused).
LIMITS = MediaLimits(
    kinds=frozenset({"image", "video", "audio", "document"}),
    max_bytes={"image": 5 * MB, "video": 16 * MB, "audio": 16 * MB, "document": 100 * MB},
    caption_length=1024,
    urls=False,
)

#: Mime types each message type plays inline.
NATIVE = {
    "image": frozenset({"image/jpeg", "image/png"}),
    "video": frozenset({"video/mp4", "video/3gpp"}),
    "audio": frozenset({"audio/aac", "audio/mp4", "audio/mpeg", "audio/amr", "audio/ogg", "audio/opus"}),
}
#: Every mime type ``/media`` accepts (Meta's list); anything else is refused with error 100.
UPLOADABLE = frozenset({
    *NATIVE["image"], *NATIVE["video"], *NATIVE["audio"], "image/webp",
    "text/plain", "application/pdf", "application/msword", "application/vnd.ms-excel",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
})
#: Names that guess to a mime type Meta spells differently.
ALIASES = {"audio/mp3": "audio/mpeg", "audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4", "image/jpg": "image/jpeg",
           "video/3gp": "video/3gpp", "audio/x-aac": "audio/aac"}


def message_type(media: Media) -> str:
    """The WhatsApp message type for an item: its kind when WhatsApp plays its format, else ``document``."""
    mime = ALIASES.get(media.mime, media.mime)
    if media.kind == "audio" and media.caption:
        return "document"  # an audio message takes no caption: a document keeps the words
    if media.kind in NATIVE and mime in NATIVE[media.kind]:
        return media.kind
    return "document"


async def send(graph: GraphClient, stream: Stream, media: Media) -> MessageRef:
    """Upload ``media`` and show it in the chat; the reply's first message quotes the question."""
    mime = ALIASES.get(media.mime, media.mime)
    if mime not in UPLOADABLE:
        raise DeliveryError(f"whatsapp cannot send files of type {mime} ({media.filename})", retryable=False)
    if media.path is None:
        raise DeliveryError(f"whatsapp sends uploaded files only, not {media.filename!r} without a path",
                            retryable=False)
    uploaded: dict[str, str] = stream.state.setdefault("whatsapp_media_ids", {})
    key = f"{media.path}\0{media.size}\0{mime}"
    media_id = uploaded.get(key)
    if media_id is None:
        data = await asyncio.to_thread(media.read)
        media_id = uploaded[key] = await graph.upload_media(stream.chat_id, data, mime, media.filename)
    quote = stream.reply_to if not stream.state.get("quoted") else None
    wamid = await graph.send_media(stream.chat_id, message_type(media), media_id, caption=media.caption,
                                   filename=media.filename, quote=quote)
    stream.state["quoted"] = True
    return MessageRef(stream.chat_id, wamid, stream.thread_id)
