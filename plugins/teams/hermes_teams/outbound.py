"""A reply on Teams: streamed natively in personal chats, posted and updated everywhere else.

**Personal chats** (``native_streaming: true``) use Teams' streaming
protocol (msteams-platform ``bots/streaming-ux.md``): each preview is a
``typing`` activity carrying the whole text so far with a ``streaminfo``
entity (and the same keys in ``channelData``, as the Teams SDK sends them):
``streamType: streaming`` and a strictly increasing ``streamSequence``; the
first answers with the ``streamId`` that every later one carries; the end
is a ``message`` activity with ``streamType: final`` and the same id. The
text must grow cumulatively, which the core guarantees for an append-only
platform (no cursor, no tool line in a preview). Teams allows one request
per second on a stream — the personal-chat budget the platform declares —
and two minutes per stream: after a refusal for time the previews stop and
the final text updates the streamed message in place (``PUT``, as the SDK
does). A tenant or user that does not allow streaming gets post + update
from then on.

**Group chats and channels** (and personal chats with streaming off): the
first preview is posted, the others and the final text ``PUT`` over it
(``…/activities/{activityId}``).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from hermes_gateway import DeliveryError, MessageRef, RateLimited, Stream

from .connector import Connector
from .errors import StreamRefused

#: Teams ends a stream after two minutes (streaming-ux.md); previews stop a little earlier.
STREAM_SECONDS = 120.0
_MARGIN = 5.0


def message(text: str, attachments: list[Any] | None = None) -> Any:
    from microsoft_teams.api.activities.message.message import MessageActivityInput

    activity = MessageActivityInput(text=text)
    if attachments:
        activity.attachments = attachments
    return activity


class Outbound:
    """The stream methods' work, for one client. ``service_url(chat_id)`` says where each conversation lives."""

    def __init__(self, connector: Connector, service_url: Callable[[str], Any], native: bool) -> None:
        self.connector = connector
        self.service_url = service_url
        self.native = native
        #: Conversations where Teams refused streaming: they get post + update from then on.
        self.refused: set[str] = set()

    def streams(self, stream: Stream) -> bool:
        """Whether this reply streams natively (decided once per reply)."""
        if "native" not in stream.state:
            stream.state["native"] = (self.native and stream.chat_kind == "private"
                                      and stream.chat_id not in self.refused)
        return bool(stream.state["native"])

    async def typing(self, stream: Stream) -> None:
        if stream.state.get("stream_id"):
            return  # the stream's own updates show that the bot is writing
        from microsoft_teams.api.activities.typing import TypingActivityInput

        url = await self.service_url(stream.chat_id)
        await self.connector.create(url, stream.chat_id, TypingActivityInput(), what="typing")

    async def preview(self, stream: Stream, ref: MessageRef | None, text: str) -> MessageRef:
        if self.streams(stream):
            streamed = await self._stream_update(stream, ref, text)
            if streamed is not None:
                return streamed
        return await self._post_or_update(stream, ref, text, what="preview")

    async def final(self, stream: Stream, ref: MessageRef | None, text: str) -> MessageRef:
        if ref is not None and stream.state.get("stream_id") == ref.message_id:
            return await self._stream_final(stream, ref, text)
        if ref is not None and "native" not in stream.state and self.native and stream.chat_kind == "private":
            return await self._recovered_final(stream, ref, text)
        return await self._post_or_update(stream, ref, text, what="final")

    # ------------------------------------------------------------------ native streaming

    async def _stream_update(self, stream: Stream, ref: MessageRef | None, text: str) -> MessageRef | None:
        """One streaming update; None when this reply must use post + update instead."""
        from microsoft_teams.api.activities.typing import TypingActivityInput

        state = stream.state
        if ref is not None and state.get("stream_id") != ref.message_id:
            return None  # a later message of an overflowing reply: Teams streams one message per reply
        if ref is None and state.get("stream_id"):
            return None
        started = state.setdefault("started", time.monotonic())
        if state.get("timed_out") or time.monotonic() - started > STREAM_SECONDS - _MARGIN:
            state["timed_out"] = True
            return ref
        sequence = state.get("sequence", 0) + 1
        state["sequence"] = sequence  # consumed even if the call fails: sequences only grow
        activity = TypingActivityInput(text=text)
        if ref is not None:
            activity = activity.with_id(ref.message_id)
        activity = activity.add_stream_update(sequence)
        url = await self.service_url(stream.chat_id)
        try:
            stream_id = await self.connector.create(url, stream.chat_id, activity, what="stream", streaming=True)
        except StreamRefused as refusal:
            if refusal.timed_out and ref is not None:
                state["timed_out"] = True
                return ref
            if refusal.not_allowed and ref is None:
                self.refused.add(stream.chat_id)
                state["native"] = False
                return None
            raise
        if ref is not None:
            return ref
        if not stream_id:
            raise DeliveryError("teams: the first streaming update got no streamId", retryable=False)
        state["stream_id"] = stream_id
        return MessageRef(stream.chat_id, stream_id, stream.thread_id)

    async def _stream_final(self, stream: Stream, ref: MessageRef, text: str) -> MessageRef:
        url = await self.service_url(stream.chat_id)
        if not stream.state.get("timed_out"):
            activity = message(text)
            activity.id = ref.message_id
            activity.add_stream_final()
            try:
                await self.connector.create(url, stream.chat_id, activity, what="final", streaming=True)
                return ref
            except StreamRefused as refusal:
                if refusal.completed:
                    return ref  # the final landed before (a call that timed out after landing)
                if not refusal.timed_out:
                    raise
                stream.state["timed_out"] = True
        await self.connector.update(url, stream.chat_id, ref.message_id, message(text), what="final")
        return ref

    async def _recovered_final(self, stream: Stream, ref: MessageRef, text: str) -> MessageRef:
        """The final text of a message this process did not start (the core finishing a reply a crash cut).

        In a personal chat it may be a stream left open, which Teams will not
        let anything update until it ends: end it with this text. When it is
        not an open stream (a posted message, a stream that ended or timed
        out), Teams refuses that, and the message is updated in place.
        """
        url = await self.service_url(stream.chat_id)
        activity = message(text)
        activity.id = ref.message_id
        activity.add_stream_final()
        try:
            await self.connector.create(url, stream.chat_id, activity, what="final", streaming=True)
            return ref
        except RateLimited:
            raise
        except DeliveryError as refused:
            if refused.retryable:
                raise
        await self.connector.update(url, stream.chat_id, ref.message_id, message(text), what="final")
        return ref

    # ------------------------------------------------------------------ post + update

    async def _post_or_update(self, stream: Stream, ref: MessageRef | None, text: str, *, what: str) -> MessageRef:
        url = await self.service_url(stream.chat_id)
        if ref is None:
            sent = await self.connector.create(url, stream.chat_id, message(text), what=what)
            return MessageRef(stream.chat_id, sent, stream.thread_id)
        await self.connector.update(url, stream.chat_id, ref.message_id, message(text), what=what)
        return ref
