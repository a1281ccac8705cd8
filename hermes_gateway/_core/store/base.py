"""The ``ConversationStore`` seam: every conversation, on every surface, in one place.

Chat platforms, the terminal chat and the API server's
``previous_response_id`` all keep their history here, with one history
policy: a turn stores what the agent added (the user's text, assistant
text, tool calls and their results), and what goes back to the model is
bounded by ``store.history_messages`` / ``store.history_chars``
(:mod:`.policy`).

The four methods the inbound runtime uses are ``history``, ``record_turn``,
``new_conversation`` and ``close``. The rest serve ``hermes-gateway
history``, the terminal's "continuing ..." line and the API server's stored
responses, which live in the same database so one file holds everything a
restart must not forget.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import HermesError
from .operator_records import OperatorRecords
from .outbound_records import OutboundRecords
from .platform_values import PlatformValueRecords
from .room_context import RoomContextRecords
from .erasure import Forgotten
from ..messages.shown import ShownMessage  # noqa: F401  (the store records it; delivery makes it)


class StoreError(HermesError):
    """The store cannot be used: always one line that names the file (``main`` prints it as is).

    Raised for a locked, unreadable, read-only, corrupt or not-a-database
    file, and for a message that cannot be stored. Nothing is deleted or
    recreated on such an error, and a write that fails is rolled back.
    """


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Which conversation: a chat (and topic/thread) on a platform, ``("cli", "local")``, ...."""

    platform: str
    chat_id: str
    thread_id: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One line of ``hermes-gateway history``: which chat, how long, when, how it started."""

    id: int
    platform: str
    chat_id: str
    thread_id: str | None
    turns: int              # how many turns were recorded (a turn: one user message and what answered it)
    messages: int           # how many messages, tool calls and results included
    created: float          # Unix time
    last_activity: float    # Unix time of the last recorded turn
    first_text: str         # the first user message ("" if none)
    current: bool           # the conversation the next turn of this chat continues

    @property
    def key(self) -> ConversationKey:
        return ConversationKey(self.platform, self.chat_id, self.thread_id)


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """An API response kept for ``previous_response_id`` and ``GET /v1/responses/{id}``."""

    response: dict[str, Any]            # the Response object as sent
    conversation: tuple[dict, ...]      # every message up to and including this reply (bounded, no instructions)
    owner: str | None = None            # which API key made it (a fingerprint, never the key); None = no keys


@dataclass(frozen=True, slots=True)
class ReplyInFlight:
    """A reply being streamed into a chat, recorded so a replica that finds it after a crash can finish it.

    Written when the reply starts, updated as its messages appear, and
    cleared when it is final (in the same transaction as the turn it
    recorded, see :meth:`ConversationStore.record_turn`). A record still
    there with an ``owner`` that is not running any more is what a crash
    left (:mod:`hermes_gateway._core.recovery`).
    """

    id: str                             # random, one per reply
    platform: str
    chat_id: str
    thread_id: str | None
    chat_kind: str | None
    message_id: str | None              # the person's message (the reply answers it)
    text: str                           # the person's message text (all of them, when answered together)
    owner: str                          # the replica (process) running it, or recovering it
    shown: tuple[ShownMessage, ...] = ()
    attempt: int = 0                    # 1: this reply is already the one retry after a crash
    started: float = 0.0                # Unix time

    @property
    def key(self) -> ConversationKey:
        return ConversationKey(self.platform, self.chat_id, self.thread_id)


class ConversationStore(OperatorRecords, OutboundRecords, PlatformValueRecords, RoomContextRecords, abc.ABC):
    """Where conversations live. Never blocks the event loop; every write is one transaction."""

    @abc.abstractmethod
    async def history(self, key: ConversationKey) -> list[dict[str, Any]]:
        """The current conversation of ``key`` as chat messages, bounded by the history policy."""

    @abc.abstractmethod
    async def record_turn(self, key: ConversationKey, messages: Sequence[dict[str, Any]], *,
                          in_flight: str | None = None) -> None:
        """Append one turn's messages (``TurnEnd.messages``) to the current conversation of ``key``.

        ``in_flight``: the id of the reply's :class:`ReplyInFlight` record, cleared
        in the same transaction (a crash between the two would otherwise
        recover a reply whose turn is already recorded).
        """

    @abc.abstractmethod
    async def new_conversation(self, key: ConversationKey) -> None:
        """``/new``: the next turn of ``key`` starts a fresh conversation (the old one is kept, listed)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the database; safe to call twice. A later call opens it again (a restarted gateway)."""

    # -- listing (``hermes-gateway history``, the terminal's resume line) ----------------------------------

    @abc.abstractmethod
    async def current(self, key: ConversationKey) -> ConversationSummary | None:
        """The conversation the next turn of ``key`` continues, or None (none yet, or just ``/new``)."""

    @abc.abstractmethod
    async def has_conversation(self, key: ConversationKey) -> bool:
        """Whether any turn was ever recorded for ``key``: its current conversation or one ``/new`` set aside.

        A platform asks this to know whether the bot already took part in a
        chat or thread, across restarts (Slack: a thread the bot replied in
        is answered without a mention).
        """

    @abc.abstractmethod
    async def list_conversations(self, limit: int = 50, offset: int = 0) -> list[ConversationSummary]:
        """Every surface's conversations, the most recently active first: at most ``limit`` of them, after
        skipping the first ``offset`` (a page of ``hermes-gateway history``)."""

    @abc.abstractmethod
    async def summary(self, conversation_id: int) -> ConversationSummary | None:
        """One conversation's summary, or None for an unknown id."""

    @abc.abstractmethod
    async def conversation(self, conversation_id: int) -> list[dict[str, Any]] | None:
        """All messages of one conversation (unbounded), or None for an unknown id."""

    # -- the API server's stored responses -----------------------------------------------------------------

    @abc.abstractmethod
    async def put_response(self, response_id: str, item: StoredResponse) -> None:
        """Keep ``item`` (replacing one with the same id); the oldest go first beyond the byte budget."""

    @abc.abstractmethod
    async def get_response(self, response_id: str, owner: str | None) -> StoredResponse | None:
        """The stored response if it exists and belongs to ``owner`` (another key's looks absent)."""

    @abc.abstractmethod
    async def delete_response(self, response_id: str, owner: str | None) -> bool:
        """Forget a response of ``owner``; False if there was none (or it is another key's)."""

    # -- inbound dedupe across restarts (a webhook retried after the gateway restarted) ---------------------

    async def remember_updates(self, updates: Sequence[tuple[str, str]]) -> None:
        """Keep these (platform, update id) pairs, so a restarted gateway still knows them.

        The default keeps nothing: a backend without it answers a redelivery
        that arrives across a restart again.
        """

    async def recent_updates(self, limit: int) -> list[tuple[str, str]]:
        """The most recently remembered (platform, update id) pairs, oldest first, at most ``limit``."""
        return []

    # -- replies in flight (crash recovery) -----------------------------------------------------------------

    @abc.abstractmethod
    async def begin_reply(self, reply: ReplyInFlight) -> None:
        """Record a reply that starts streaming (replacing a record with the same id)."""

    @abc.abstractmethod
    async def update_reply(self, reply_id: str, shown: Sequence[ShownMessage]) -> None:
        """The messages a reply in flight shows now; nothing happens for an unknown id."""

    @abc.abstractmethod
    async def end_reply(self, reply_id: str) -> None:
        """Clear the record: the reply is final (or was recovered). Nothing happens for an unknown id."""

    @abc.abstractmethod
    async def replies_in_flight(self) -> list[ReplyInFlight]:
        """Every reply recorded as in flight, the oldest first."""

    @abc.abstractmethod
    async def claim_reply(self, reply_id: str, owner: str, new_owner: str) -> ReplyInFlight | None:
        """Take over a record from ``owner`` (the replica that left it): atomic, so one claimer wins.

        Returns the record now owned by ``new_owner``, or None when it is gone
        or no longer ``owner``'s (another replica claimed it first, or the
        reply ended meanwhile).
        """

    # -- erasure (``hermes-gateway forget``) ------------------------------------------------------------------

    @abc.abstractmethod
    async def forget_person(self, platform: str, user_id: str) -> Forgotten:
        """Delete everything of one person, in one transaction (what that is: :mod:`.erasure`).

        Returns the counts, the media files the deleted messages referenced (the
        caller deletes those files) and the shared chats whose conversations were kept.
        """
