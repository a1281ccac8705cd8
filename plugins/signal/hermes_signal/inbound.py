"""signal-cli's ``receive`` envelopes as the core's ``Incoming`` (or nothing, for what is not a person's message).

The envelope (``json/JsonMessageEnvelope.java``): ``sourceNumber``,
``sourceUuid``, ``timestamp`` and one of ``dataMessage`` (a message, or a
reaction in ``dataMessage.reaction``), ``editMessage`` (``targetSentTimestamp``
and the new ``dataMessage``), ``syncMessage`` (the bot's own sends from its
other devices: skipped), receipts, typing, calls and stories (skipped).

Ids: a chat is the person's number (their uuid when the number is hidden) or
``group:<groupId>``; a person's message is ``<author>/<timestamp>`` (Signal
identifies a message by its author and sent timestamp), which is what
``react`` and the edits refer to. A mention is U+FFFC in the text with
``mentions[{number, uuid, start, length}]``; a mention of the bot's number or
uuid, or a quote of one of its messages, is a mention for the core's gating.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, AsyncIterator, Awaitable, Callable

from hermes_gateway import Attachment, FetchError, Incoming

log = logging.getLogger(__name__)

GROUP_PREFIX = "group:"
#: The most of a person's text the core is handed (Signal sends more than 2000 bytes as a long-text file).
MAX_TEXT_CHARS = 64 * 1024
CHUNK = 64 * 1024

Fetcher = Callable[[str, str, int | None], Awaitable[bytes]]


def chat_params(chat_id: str) -> dict[str, Any]:
    """``recipient`` or ``groupId`` for a chat id, as every signal-cli send method takes it."""
    if chat_id.startswith(GROUP_PREFIX):
        return {"groupId": chat_id[len(GROUP_PREFIX):]}
    return {"recipient": [chat_id]}


def split_message_id(message_id: str, chat_id: str) -> tuple[str, int]:
    """``author/timestamp`` (or a bare timestamp: the chat's person) as Signal's (author, timestamp)."""
    author, _, timestamp = message_id.rpartition("/")
    return (author or chat_id), int(timestamp)


class EnvelopeReader:
    """Turns envelopes into ``Incoming``; knows the bot's number and uuid (for mentions, and to skip itself)."""

    def __init__(self, platform: str, account: str, fetch: Fetcher) -> None:
        self.platform = platform
        self.account = account
        self.account_uuid: str | None = None
        self._fetch = fetch

    def is_bot(self, number: Any, uuid: Any) -> bool:
        return (bool(number) and number == self.account) or (bool(uuid) and uuid == self.account_uuid)

    def read(self, payload: dict[str, Any]) -> Incoming | None:
        envelope = payload.get("envelope")
        if not isinstance(envelope, dict):
            return None
        author = _text(envelope.get("sourceNumber")) or _text(envelope.get("sourceUuid"))
        timestamp = envelope.get("timestamp")
        if not author or not isinstance(timestamp, int) or self.is_bot(envelope.get("sourceNumber"),
                                                                       envelope.get("sourceUuid")):
            return None
        edit = envelope.get("editMessage")
        if isinstance(edit, dict) and isinstance(edit.get("dataMessage"), dict) \
                and isinstance(edit.get("targetSentTimestamp"), int):
            return self._message(author, edit["dataMessage"], timestamp, edit_of=edit["targetSentTimestamp"])
        data = envelope.get("dataMessage")
        if isinstance(data, dict) and not isinstance(data.get("reaction"), dict):
            return self._message(author, data, timestamp)
        return None   # reactions, receipts, typing, sync messages of our own sends, calls, stories

    def _message(self, author: str, data: dict[str, Any], timestamp: int, edit_of: int | None = None) -> Incoming | None:
        group = data.get("groupInfo")
        group_id = _text(group.get("groupId")) if isinstance(group, dict) else None
        if isinstance(group, dict) and group.get("type") not in (None, "DELIVER"):
            return None   # a group's membership or name changed: nothing to answer
        chat_id = f"{GROUP_PREFIX}{group_id}" if group_id else author
        raw = data.get("message")
        text = raw if isinstance(raw, str) else ""
        text, mentioned = self._mentions(text[:MAX_TEXT_CHARS], data.get("mentions"))
        quote = data.get("quote")
        if isinstance(quote, dict) and self.is_bot(quote.get("authorNumber"), quote.get("authorUuid")):
            mentioned = True
        attachments = tuple(a for a in (self._attachment(item, chat_id) for item in _list(data.get("attachments")))
                            if a is not None)
        if not text and not attachments:
            return None
        message_id = f"{author}/{edit_of if edit_of is not None else timestamp}"
        update_id = f"{author}/{timestamp}" if edit_of is None else f"edit/{author}/{timestamp}"
        return Incoming(platform=self.platform, chat_id=chat_id, text=text, sender_id=author, update_id=update_id,
                        message_id=message_id, chat_kind="group" if group_id else "private", mentioned=mentioned,
                        attachments=attachments, edit_of=message_id if edit_of is not None else None)

    def _mentions(self, text: str, mentions: Any) -> tuple[str, bool]:
        """The text with each U+FFFC mention spelled out (the bot's removed), and whether the bot was one."""
        mentioned = False
        spans: list[tuple[int, int, str]] = []
        for item in _list(mentions):
            start, length = item.get("start"), item.get("length")
            if not isinstance(start, int) or not isinstance(length, int) or start < 0 or length < 0:
                continue
            if self.is_bot(item.get("number"), item.get("uuid")):
                mentioned = True
                spans.append((start, length, ""))
            else:
                spans.append((start, length, "@" + (_text(item.get("name")) or _text(item.get("number")) or "someone")))
        units = text.encode("utf-16-le")   # Signal counts mention positions in UTF-16 code units
        for start, length, name in sorted(spans, reverse=True):
            if (start + length) * 2 <= len(units):
                units = units[:start * 2] + name.encode("utf-16-le") + units[(start + length) * 2:]
        return units.decode("utf-16-le", "replace").strip(), mentioned

    def _attachment(self, item: dict[str, Any], chat_id: str) -> Attachment | None:
        attachment_id = _text(item.get("id"))
        if not attachment_id:
            return None
        mime = _text(item.get("contentType")) or "application/octet-stream"
        size = item.get("size") if isinstance(item.get("size"), int) and item["size"] >= 0 else None
        name = _text(item.get("filename"))
        kind = ("voice" if mime.startswith("audio/") and item.get("voiceNote") else
                "audio" if mime.startswith("audio/") else "image" if mime.startswith("image/") else
                "video" if mime.startswith("video/") else "document")

        async def fetch() -> AsyncIterator[bytes]:
            data = await self._fetch(attachment_id, chat_id, size)
            for start in range(0, len(data), CHUNK):
                yield data[start:start + CHUNK]
        return Attachment(kind, fetch, mime=mime, size=size, filename=name)  # type: ignore[arg-type]


def decode_attachment(result: Any, name: str) -> bytes:
    """``getAttachment``'s answer ``{"data": base64}`` as bytes (a FetchError for anything else)."""
    data = result.get("data") if isinstance(result, dict) else None
    if not isinstance(data, str):
        raise FetchError(f"signal: the daemon's answer for {name} holds no file")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise FetchError(f"signal: the daemon's answer for {name} is not base64") from None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
