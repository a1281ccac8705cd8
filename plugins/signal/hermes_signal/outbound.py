"""A reply on Signal: the first text a ``send``, the rest edits of it (``send`` with ``editTimestamp``), within
Signal's 10 edits per message.

Signal's apps show at most 10 edits of one message (Signal-Android
``MessageConstraintsUtil.MAX_EDIT_COUNT``, Signal-Desktop
``MESSAGE_MAX_EDIT_COUNT``) and drop the rest; signal-cli sends them anyway.
So each message keeps a count: previews use at most :data:`PREVIEW_EDITS`,
and :data:`FINAL_EDITS` stay for the final text (the core sends a message's
final text once, again only when it had to change). A preview past the
budget is not sent (the person sees the last one until the final text):
that is Signal's limit, not pacing, which stays the core's. An edit targets
the latest revision's timestamp (one report says an edit of the original
after the first edit is dropped; Android finds the message by any revision).

``MessageRef.message_id`` stays the first send's timestamp, what reactions
and quotes refer to; the latest revision and the count live here, for the
last :data:`KEPT` messages.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from hermes_gateway import DeliveryError, MessageRef, Stream

from .inbound import chat_params, split_message_id
from .rpc import Rpc

MAX_EDITS = 10
FINAL_EDITS = 2
PREVIEW_EDITS = MAX_EDITS - FINAL_EDITS
KEPT = 2000


@dataclass
class Shown:
    latest: int          # the timestamp an edit targets
    text: str
    edits: int = 0


class Outbound:
    """Sends and edits the bot's messages through the daemon; remembers what each message shows."""

    def __init__(self, rpc: Rpc, account: str) -> None:
        self.rpc = rpc
        self.account = account
        self._shown: OrderedDict[tuple[str, str], Shown] = OrderedDict()

    def shown(self, chat_id: str, message_id: str) -> Shown | None:
        return self._shown.get((chat_id, message_id))

    async def send(self, stream: Stream, text: str, *, attachments: list[str] | None = None,
                   what: str = "send") -> MessageRef:
        params: dict[str, Any] = {**chat_params(stream.chat_id), "message": text}
        if attachments:
            params["attachments"] = attachments
        if stream.reply_to and stream.chat_id.startswith("group:"):   # in a group, quote what is answered
            try:
                author, timestamp = split_message_id(stream.reply_to, stream.chat_id)
                params.update(quoteTimestamp=timestamp, quoteAuthor=author)
            except ValueError:
                pass
        result = await self.rpc.call("send", params, what=what)
        timestamp = _timestamp(result, what)
        self._keep((stream.chat_id, str(timestamp)), Shown(timestamp, text))
        return MessageRef(stream.chat_id, str(timestamp), stream.thread_id)

    async def edit(self, stream: Stream, message: MessageRef, text: str, *, final: bool) -> MessageRef:
        shown = self.shown(stream.chat_id, message.message_id)
        if shown is None:   # a message of an earlier run (after a restart): its count is unknown, start from it
            shown = Shown(int(message.message_id), "\0")
            self._keep((stream.chat_id, message.message_id), shown)
        if shown.text == text:
            return message                                       # "not modified" is success
        if not final and shown.edits >= PREVIEW_EDITS:
            return message                                       # Signal's edit budget: the final text gets it
        if shown.edits >= MAX_EDITS:
            raise DeliveryError(f"signal: Signal apps show at most {MAX_EDITS} edits of one message",
                                retryable=False)
        params = {**chat_params(stream.chat_id), "message": text, "editTimestamp": shown.latest}
        result = await self.rpc.call("send", params, what="final edit" if final else "preview edit")
        shown.latest, shown.text = _timestamp(result, "edit"), text
        shown.edits += 1
        return message

    def _keep(self, key: tuple[str, str], shown: Shown) -> None:
        self._shown[key] = shown
        self._shown.move_to_end(key)
        while len(self._shown) > KEPT:
            self._shown.popitem(last=False)


def _timestamp(result: Any, what: str) -> int:
    """The sent message's timestamp (its id); an answer without one may still have been sent."""
    timestamp = result.get("timestamp") if isinstance(result, dict) else None
    if not isinstance(timestamp, int) or isinstance(timestamp, bool) or timestamp <= 0:
        raise DeliveryError(f"signal: {what}: the daemon's answer has no timestamp", retryable=False,
                            maybe_delivered=True)
    return timestamp
