"""Sending a reply's media as Discord attachments (the ``on_media`` hook's work).

Each item is one message: the file attached with discord.py's
``discord.File`` (a ``multipart/form-data`` POST with ``payload_json`` and
``files[0]``), the caption as the message's content, ``allowed_mentions``
none like every message the plugin sends. Discord previews images, video
and audio by the file name's extension, so every kind goes the same way.

Limits (declared in :data:`LIMITS`, so the core never hands over more):
10 MiB per file, Discord's default for bots in servers without boosts
(level 2 allows 50 MiB, level 3 100 MiB; discord.py 2.7
``utils.DEFAULT_FILE_SIZE_LIMIT_BYTES``); ``DiscordPlugin(upload_limit=...)``
raises it for a bot that only posts in boosted servers. Content (the
caption) is 2000 characters.

Failures are the plugin's usual translation (:func:`.errors.translate`):
413 (code 40005, too large after all) and 400 fail for good, and the core
shows the item's line; 429 and 5xx reach the core unslept (:mod:`.ratelimit`);
no answer within :attr:`DiscordClient.upload_timeout` may have landed.
"""

from __future__ import annotations

import asyncio
import io
from typing import TYPE_CHECKING

from hermes_gateway import DeliveryError, Media, MediaLimits, MessageRef, Stream

if TYPE_CHECKING:
    from .client import DiscordClient

#: Discord's default upload limit per file (10 MiB since 2024, for bots and servers without boosts).
UPLOAD_LIMIT = 10 * 1024 * 1024
CAPTION_CHARACTERS = 2000
#: Seconds one upload may take before it counts as failed (and may have landed): longer than a text call.
UPLOAD_TIMEOUT = 60.0


def limits(upload_limit: int = UPLOAD_LIMIT) -> MediaLimits:
    """What the plugin sends: every kind, as a file of at most ``upload_limit`` bytes, captions as content."""
    return MediaLimits(kinds=frozenset({"image", "video", "audio", "document"}),
                       max_bytes={"default": upload_limit}, caption_length=CAPTION_CHARACTERS)


LIMITS = limits()


async def send(client: "DiscordClient", stream: Stream, media: Media) -> MessageRef:
    """Post ``media`` into the stream's channel as one message with the file attached; its ref."""
    from .client import quote
    from .sdk import sdk

    if media.path is None:  # the core hands over files only (urls=False)
        raise DeliveryError(f"discord: {media.filename} has no file to upload", retryable=False)
    discord = sdk()
    data = await asyncio.to_thread(media.read)
    none = discord.AllowedMentions.none()
    reference = quote(stream)
    sent = await client.call(
        stream, "messages", "upload file",
        lambda channel: channel.send(media.caption or None, file=discord.File(io.BytesIO(data), filename=media.filename),
                                     allowed_mentions=none, reference=reference),
        timeout=client.upload_timeout)
    stream.state["quoted"] = True
    return MessageRef(stream.chat_id, str(sent.id), stream.thread_id)
