"""``MemoryStore``: the conversation store's contract, in memory.

For tests (including virtual-time ones: inject ``clock``; a "restart" is
``close()`` and the same instance handed to the next gateway: closing keeps
the contents, as closing a file keeps the file), for ephemeral runs
(``store.path: ":memory:"``), and as the executable description of
what :class:`~hermes_gateway._core.store.sqlite.SQLiteStore` must do: both pass
one contract test module. Messages are kept as JSON text, so a caller
mutating a dict afterwards changes nothing stored, and a message that is
not JSON is refused exactly as the SQLite store refuses it.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import dataclasses

from .base import ConversationKey, ConversationStore, ConversationSummary, ReplyInFlight, ShownMessage, StoredResponse
from .codec import (DEFAULT_MAX_RESPONSES, DEFAULT_MAX_UPDATES, DEFAULT_RESPONSE_BYTES, decode, encode,
                    first_user_text, key_parts)
from .operator_records import MemoryOperatorRecords
from .outbound_records import MemoryOutboundRecords
from .platform_values import MemoryPlatformValueRecords
from .room_context import MemoryRoomContextRecords
from .erasure import Forgotten, add, media_paths, own_chats
from .policy import bound_newest_first, message_chars


@dataclass
class _Conversation:
    id: int
    key: tuple[str, str, str]
    created: float
    last_activity: float
    turns: int = 0
    first_text: str | None = None
    messages: list[tuple[str, int]] = field(default_factory=list)  # (JSON, chars)


@dataclass(frozen=True)
class _Response:
    owner: str | None
    response: str
    conversation: str
    size: int


class MemoryStore(MemoryOperatorRecords, MemoryOutboundRecords, MemoryPlatformValueRecords, MemoryRoomContextRecords,
                  ConversationStore):
    """Conversations and stored responses in dicts; gone when the process ends."""

    def __init__(self, *, history_messages: int = 40, history_chars: int = 60_000,
                 response_bytes: int = DEFAULT_RESPONSE_BYTES, max_responses: int = DEFAULT_MAX_RESPONSES,
                 max_updates: int = DEFAULT_MAX_UPDATES, clock: Callable[[], float] = time.time) -> None:
        self.history_messages = history_messages
        self.history_chars = history_chars
        self.response_bytes = response_bytes
        self.max_responses = max_responses
        self.clock = clock
        self.location = ":memory:"
        self._conversations: dict[int, _Conversation] = {}
        self._current: dict[tuple[str, str, str], int] = {}
        self._responses: OrderedDict[str, _Response] = OrderedDict()
        self._response_total = 0
        self._updates: deque[tuple[str, str]] = deque(maxlen=max_updates)
        self._in_flight: dict[str, ReplyInFlight] = {}

    # -- conversations ---------------------------------------------------------------------------------------

    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        conv = self._conversations.get(self._current.get(key_parts(key), -1))
        if conv is None:
            return []
        pairs = ((decode(text), chars) for text, chars in reversed(conv.messages))
        return bound_newest_first(pairs, self.history_messages, self.history_chars)

    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]], *,
                          in_flight: str | None = None) -> None:
        encoded = [(encode(m), message_chars(m)) for m in messages]  # all or nothing
        if in_flight is not None:
            self._in_flight.pop(in_flight, None)
        if not encoded:
            return
        parts = key_parts(key)
        now = self.clock()
        conv = self._conversations.get(self._current.get(parts, -1))
        if conv is None:
            conv = _Conversation(max(self._conversations, default=0) + 1, parts, now, now)
            self._conversations[conv.id] = conv
            self._current[parts] = conv.id
        conv.messages.extend(encoded)
        conv.turns += 1
        conv.last_activity = now
        if conv.first_text is None:
            conv.first_text = first_user_text(messages)

    async def new_conversation(self, key: ConversationKey) -> None:
        self._current.pop(key_parts(key), None)

    async def close(self) -> None:
        """Nothing to release; the contents stay for the next user of this instance."""

    # -- listing ---------------------------------------------------------------------------------------------

    def _summary(self, conv: _Conversation) -> ConversationSummary:
        platform, chat, thread = conv.key
        return ConversationSummary(conv.id, platform, chat, thread or None, conv.turns, len(conv.messages),
                                   conv.created, conv.last_activity, conv.first_text or "",
                                   self._current.get(conv.key) == conv.id)

    async def current(self, key: ConversationKey) -> ConversationSummary | None:
        conv = self._conversations.get(self._current.get(key_parts(key), -1))
        return None if conv is None else self._summary(conv)

    async def has_conversation(self, key: ConversationKey) -> bool:
        parts = key_parts(key)
        return any(conv.key == parts for conv in self._conversations.values())

    async def list_conversations(self, limit: int = 50, offset: int = 0) -> list[ConversationSummary]:
        newest = sorted(self._conversations.values(), key=lambda c: (c.last_activity, c.id), reverse=True)
        start = max(0, offset)
        return [self._summary(c) for c in newest[start:start + max(0, limit)]]

    async def summary(self, conversation_id: int) -> ConversationSummary | None:
        conv = self._conversations.get(conversation_id)
        return None if conv is None else self._summary(conv)

    async def conversation(self, conversation_id: int) -> list[dict[str, Any]] | None:
        conv = self._conversations.get(conversation_id)
        return None if conv is None else [decode(text) for text, _ in conv.messages]

    # -- stored responses ------------------------------------------------------------------------------------

    async def put_response(self, response_id: str, item: StoredResponse) -> None:
        response, conversation = encode(item.response, "response"), encode(list(item.conversation), "response")
        size = len(response.encode()) + len(conversation.encode())
        old = self._responses.pop(response_id, None)
        if old is not None:
            self._response_total -= old.size
        self._responses[response_id] = _Response(item.owner, response, conversation, size)
        self._response_total += size
        while len(self._responses) > 1 and (self._response_total > self.response_bytes
                                            or len(self._responses) > self.max_responses):
            _, evicted = self._responses.popitem(last=False)
            self._response_total -= evicted.size

    async def get_response(self, response_id: str, owner: str | None) -> StoredResponse | None:
        found = self._responses.get(response_id)
        if found is None or found.owner != owner:
            return None
        return StoredResponse(decode(found.response), tuple(decode(found.conversation)), found.owner)

    async def delete_response(self, response_id: str, owner: str | None) -> bool:
        if await self.get_response(response_id, owner) is None:
            return False
        self._response_total -= self._responses.pop(response_id).size
        return True

    # -- inbound dedupe --------------------------------------------------------------------------------------

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        self._updates.extend((str(p), str(u)) for p, u in updates)

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        return list(self._updates)[-limit:] if limit > 0 else []

    # -- replies in flight -----------------------------------------------------------------------------------

    async def begin_reply(self, reply: ReplyInFlight) -> None:
        self._in_flight[reply.id] = dataclasses.replace(reply, shown=tuple(reply.shown),
                                                        started=reply.started or self.clock())

    async def update_reply(self, reply_id: str, shown: Sequence[ShownMessage]) -> None:
        found = self._in_flight.get(reply_id)
        if found is not None:
            self._in_flight[reply_id] = dataclasses.replace(found, shown=tuple(shown))

    async def end_reply(self, reply_id: str) -> None:
        self._in_flight.pop(reply_id, None)

    async def replies_in_flight(self) -> list[ReplyInFlight]:
        return sorted(self._in_flight.values(), key=lambda r: r.started)

    async def claim_reply(self, reply_id: str, owner: str, new_owner: str) -> ReplyInFlight | None:
        found = self._in_flight.get(reply_id)
        if found is None or found.owner != owner:
            return None
        claimed = self._in_flight[reply_id] = dataclasses.replace(found, owner=new_owner)
        return claimed

    # -- erasure ---------------------------------------------------------------------------------------------

    async def forget_person(self, platform: str, user_id: str) -> Forgotten:
        records, outbound = self._records(), self._outbound()
        usage = records["usage"]
        candidates = [r.chat_id for r in usage if (r.platform, r.user_id) == (platform, user_id)]
        candidates += [p.chat_id for p in records["pairings"].values() if (p.platform, p.user_id) == (platform, user_id)]
        others = [r.chat_id for r in usage if r.platform == platform and r.user_id != user_id]
        own, shared = own_chats(user_id, candidates, others)
        mine = set(own)
        counts: dict[str, int] = {}
        media: list[str] = []

        def in_own(p: str, chat: str) -> bool:
            return p == platform and chat in mine
        for conv in [c for c in self._conversations.values() if in_own(c.key[0], c.key[1])]:
            media += media_paths(text for text, _ in conv.messages)
            add(counts, "messages", len(conv.messages))
            add(counts, "conversations", 1)
            del self._conversations[conv.id]
            if self._current.get(conv.key) == conv.id:
                del self._current[conv.key]
        flying = [k for k, r in self._in_flight.items() if in_own(r.platform, r.chat_id)]
        for k in flying:
            del self._in_flight[k]
        add(counts, "replies in flight", len(flying))
        settings = [k for k in records["settings"] if in_own(k[0], k[1])]
        add(counts, "chat settings", sum(len(records["settings"].pop(k)) for k in settings))
        reminders = [k for k, r in outbound["reminders"].items() if in_own(r.platform, r.chat_id)]
        for k in reminders:
            del outbound["reminders"][k]
        add(counts, "reminders", len(reminders))
        kept = [r for r in usage if not (in_own(r.platform, r.chat_id) or (r.platform, r.user_id) == (platform, user_id))]
        add(counts, "usage records", len(usage) - len(kept))
        records["usage"] = kept
        add(counts, "approvals", int(records["approved"].pop((platform, user_id), None) is not None))
        codes = [c for c, p in records["pairings"].items() if (p.platform, p.user_id) == (platform, user_id)]
        for c in codes:
            del records["pairings"][c]
        add(counts, "pairing codes", len(codes))
        add(counts, "room context", self.forget_sender(platform, user_id))
        return Forgotten(counts, tuple(dict.fromkeys(media)), tuple(shared))
