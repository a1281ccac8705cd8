"""One running Signal client per gateway: the daemon's JSON-RPC out, its event stream in, and the stream methods.

The core builds it as ``SignalClient(settings, context)``; building does no
I/O. ``start()`` learns the bot's uuid (``getUserStatus``, for mentions by
uuid) and opens the event stream (:mod:`.events`), ``stop()`` closes it while
replies still being written go out, ``close()`` closes the HTTP session.
Sending: :mod:`.outbound` (a send, then edits within Signal's budget);
receiving: :mod:`.inbound` (envelopes as ``Incoming``, files fetched with
``getAttachment`` only when the core asks).
"""

from __future__ import annotations

import base64
import logging
import re
from typing import Any

from hermes_gateway import (DeliveryError, FetchError, Media, MessageRef, PlatformClient, PlatformContext, Stream,
                            rewrite_tables, scrub_secrets, utf8_length)

from .events import EventStream
from .inbound import EnvelopeReader, chat_params, decode_attachment, split_message_id
from .outbound import Outbound
from .rpc import Rpc
from .settings import SignalSettings

log = logging.getLogger(__name__)

#: signal-cli's MAX_ATTACHMENT_SIZE (config/ServiceConfig.java): the most a received file can be.
MAX_INBOUND_BYTES = 150 * 1024 * 1024


#: Columns of a table laid out as text (a phone's width in Signal's proportional font: wider becomes key: value).
TABLE_WIDTH = 32


def render(text: str) -> str:
    """What Signal shows: the text as typed (Signal renders no Markdown), tables laid out (``rewrite_tables``)."""
    return rewrite_tables(text, width=TABLE_WIDTH, style="plain")


def rendered_length(text: str) -> int:
    """``Platform.rendered_length``: the UTF-8 bytes Signal counts once tables are laid out."""
    return utf8_length(render(text))


class SignalClient(PlatformClient):
    """Sends into and receives from one Signal account, through its signal-cli daemon, for one gateway."""

    settings: SignalSettings

    def __init__(self, settings: SignalSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self.rpc = Rpc(settings)
        self.outbound = Outbound(self.rpc, settings.account)
        self.reader = EnvelopeReader(context.platform, settings.account, self._fetch)
        self.events = EventStream(settings, context, lambda: self.rpc.session, self._envelope, self._connected)

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        await self.events.start()   # its connect learns the bot's uuid (_connected)

    async def stop(self) -> None:
        await self.events.stop()

    async def close(self) -> None:
        await self.events.stop()
        await self.rpc.close()

    async def _learn_uuid(self) -> None:
        """The bot's uuid, which people's apps mention it by (best effort: a daemon down now is retried later)."""
        try:
            result = await self.rpc.call("getUserStatus", {"recipient": [self.settings.account]},
                                         what="looking up the bot's uuid", sends=False, timeout=5)
        except DeliveryError as exc:
            log.info("signal: could not learn the bot's uuid yet (%s); mentions by number still count", exc)
            return
        for status in result if isinstance(result, list) else []:
            if isinstance(status, dict) and isinstance(status.get("uuid"), str) and status["uuid"]:
                self.reader.account_uuid = status["uuid"]

    async def _connected(self) -> None:
        """Each (re)connect of the event stream: learn the uuid if the daemon could not say it before."""
        if self.reader.account_uuid is None:
            await self._learn_uuid()

    async def _envelope(self, payload: dict[str, Any]) -> None:
        incoming = self.reader.read(payload)
        if incoming is not None:
            self.context.receive(incoming)

    # ---------------------------------------------------------------- stream methods

    def supports_edit(self, stream: Stream) -> bool:
        """Signal's apps show edits (within 10 per message); ``edits: false`` sends each reply once, whole."""
        return self.settings.edits

    async def on_stream_start(self, stream: Stream) -> None:
        await self.rpc.call("sendTyping", chat_params(stream.chat_id), what="typing", sends=False)

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        text = render(text)
        if message is None:
            return await self.outbound.send(stream, text, what="preview")
        return await self.outbound.edit(stream, message, text, final=False)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        text = render(text)
        if message is None:
            return await self.outbound.send(stream, text, what="final text")
        return await self.outbound.edit(stream, message, text, final=True)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file as a ``data:`` URI attachment (the daemon may run elsewhere: no shared file path)."""
        name = re.sub(r"[;,\s]", "_", media.filename or "file")[:100]
        mime = media.mime if re.fullmatch(r"[\w.+-]+/[\w.+-]+", media.mime or "") else "application/octet-stream"
        uri = f"data:{mime};filename={name};base64,{base64.b64encode(media.read()).decode()}"
        return await self.outbound.send(stream, media.caption, attachments=[uri], what=f"the file {name}")

    # ---------------------------------------------------------------- reactions

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """``sendReaction`` on the person's message (``author/timestamp``); Signal keeps one reaction per person."""
        try:
            author, timestamp = split_message_id(message_id, chat_id)
        except ValueError:
            raise DeliveryError(f"signal: reaction: {message_id!r} is not a Signal message id",
                                retryable=False) from None
        await self.rpc.call("sendReaction", {**chat_params(chat_id), "emoji": emoji, "targetAuthor": author,
                                             "targetTimestamp": timestamp}, what="reaction")

    # ---------------------------------------------------------------- files people sent

    async def _fetch(self, attachment_id: str, chat_id: str, size: int | None) -> bytes:
        """``getAttachment``: the whole file as base64 in one answer (signal-cli has no streamed download)."""
        if size is not None and size > MAX_INBOUND_BYTES:
            raise FetchError(f"signal: the file is over signal-cli's {MAX_INBOUND_BYTES // 2**20} MiB")
        bound = ((size if size is not None else MAX_INBOUND_BYTES) * 4 // 3) + 4096
        try:
            result = await self.rpc.call("getAttachment", {"id": attachment_id}, what="a file", sends=False,
                                         max_bytes=bound)
        except DeliveryError as exc:
            raise FetchError(scrub_secrets(str(exc))) from None
        data = decode_attachment(result, "a file")
        if size is not None and len(data) > size:
            raise FetchError("signal: the daemon answered more bytes than the file declared")
        return data
