"""Catching up: the messages sent to the bot while the gateway was down, answered once, oldest first.

Discord does not keep events for a bot that is not connected: a RESUME
replays what one session missed, but a restarted gateway (or one whose
session could not be resumed) IDENTIFYs afresh, and a message sent in
between would never be answered. So after every READY (a new session:
the start, or a reconnect that could not resume) the client reads, in each
chat it has a conversation in that was active within
``conversation.catch_up_window`` (the core's store knows them:
``context.recent_chats``), the channel's history after the last message it
saw there (``GET /channels/{id}/messages?after=``, 100 a page, oldest
first, at most :data:`MAX_PAGES` pages), and hands each message to the core
as if it had just arrived. Never older than the window.

Exactly once: the update id of a fetched message is its id, the same as
the live MESSAGE_CREATE's, and the core dedupes by it across restarts and
replicas (a message the bot already answered, or one two replicas both
fetch, is answered once). The last message seen per channel (and whether
the channel is a DM) is kept with ``context.set_value``, one write per
burst, so a restart reads only what is new.

Each page is one request through the core's pacing (``context.paced``):
the channel's budget and the bot's, a 429 waited out by the core and the
read made again; the plugin never sleeps or retries.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from hermes_gateway import CatchUpTask, Incoming, LastSeen, Stream

from .receiving import target_channel, to_incoming
from .redaction import scrub

if TYPE_CHECKING:
    from hermes_gateway import PlatformContext

    from .client import DiscordClient

log = logging.getLogger(__name__)

#: Where the last message seen per channel is kept (``context.set_value``): {channel id: [message id, kind]}.
SEEN_KEY = "catch_up.last_seen"
#: The most channels remembered (the least recently active are forgotten first).
MAX_CHANNELS = 500
#: Discord's largest page of history.
PAGE = 100
#: Pages read per channel in one catch-up (at most 1,000 messages).
MAX_PAGES = 10
DISCORD_EPOCH_MS = 1_420_070_400_000


def _snowflake(message_id: str) -> int:
    """A message id as a number to compare (a stored value that is not one is dropped)."""
    if not message_id.isdigit():
        raise ValueError(f"not a Discord id: {message_id!r}")
    return int(message_id)


def snowflake_at(unix_seconds: float) -> int:
    """The smallest message id Discord would give a message sent at ``unix_seconds``."""
    return max(int(unix_seconds * 1000) - DISCORD_EPOCH_MS, 0) << 22


class CatchUp(CatchUpTask):
    """The last message seen per channel, and the catch-up after a READY (started, awaited and stopped as
    :class:`hermes_gateway.CatchUpTask` does)."""

    context: "PlatformContext"

    def __init__(self, client: "DiscordClient") -> None:
        self.client = client
        #: channel id -> (last message id, chat kind), kept with ``context.set_value`` under :data:`SEEN_KEY`
        super().__init__(client.context, LastSeen(client.context, order=_snowflake, platform="discord",
                                                  key=SEEN_KEY, max_channels=MAX_CHANNELS),
                         name="discord-catch-up")

    async def load(self) -> None:
        """What an earlier run saw (the store is shared by replicas and survives restarts)."""
        await self.last_seen.load()

    def note(self, channel_id: str, message_id: str, kind: str) -> None:
        """A message of ``channel_id`` was seen (live or fetched): later catch-ups start after it."""
        self.last_seen.note(channel_id, message_id, kind)

    async def read_missed(self) -> None:
        window = self.context.catch_up_window
        floor = snowflake_at(time.time() - window)
        try:
            chats = await self.context.recent_chats(window)
        except Exception as exc:
            log.warning("discord: no catch-up: the conversations were not listed (%s)",
                        scrub(f"{type(exc).__name__}: {exc}"))
            return
        done: set[int] = set()
        for chat_id, thread_id in reversed(chats):  # the chat waiting longest first
            channel = target_channel(chat_id, thread_id)
            if channel in done:
                continue
            done.add(channel)
            try:
                await self._channel(chat_id, thread_id, floor)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # this channel only: the others are still read
                log.warning("discord: catching up in channel %s failed: %s", channel,
                            scrub(f"{type(exc).__name__}: {exc}"))

    async def _channel(self, chat_id: str, thread_id: str | None, floor: int) -> None:
        channel = str(target_channel(chat_id, thread_id))
        known = self.last_seen.get(channel)
        kind = "thread" if thread_id else (known[1] if known is not None else self._kind_of(int(channel)))
        after = max(floor, int(known[0]) if known is not None else 0)
        for _ in range(MAX_PAGES):
            messages = await self.context.paced(chat_id, partial(self._page, chat_id, thread_id, kind, after),
                                                what="read history", chat_kind=kind)
            for message in messages:
                after = max(after, int(message.id))
                self.note(channel, str(message.id), kind)
                incoming = self._incoming(message, chat_id, thread_id)
                if incoming is not None:
                    log.info("discord: a message sent while the bot was away, in channel %s", channel)
                    self.context.receive(incoming)
            if len(messages) < PAGE:
                return

    def _kind_of(self, channel_id: int) -> str:
        """A channel with no message seen yet (a conversation older than this version, say): a server's
        channels are all known after READY, so one that is not is a DM."""
        client = self.client._discord
        return "guild" if client is not None and client.get_channel(channel_id) is not None else "dm"

    async def _page(self, chat_id: str, thread_id: str | None, kind: str, after: int) -> list[Any]:
        """One page of the channel's history after ``after``, oldest first (one request)."""
        import discord

        from .client import REACTING

        async def read(_channel: Any) -> list[Any]:
            channel = client.get_partial_messageable(
                target_channel(chat_id, thread_id), type=discord.ChannelType.private if kind == "dm" else None)
            return [m async for m in channel.history(limit=PAGE, after=discord.Object(id=after), oldest_first=True)]

        client = await self.client.discord_client()
        stream = Stream(platform=REACTING, chat_id=chat_id, thread_id=thread_id)
        return await self.client.call(stream, "messages", "read history", read)  # type: ignore[no-any-return]

    def _incoming(self, message: Any, chat_id: str, thread_id: str | None) -> Incoming | None:
        """The fetched message as the live event would have made it (a thread's under its parent channel)."""
        discord_client = self.client._discord
        if discord_client is None:
            return None
        incoming = to_incoming(message, discord_client.user, self.client.downloads)
        if incoming is None or thread_id is None:
            return incoming
        return replace(incoming, chat_id=chat_id, thread_id=thread_id, chat_kind="thread")
