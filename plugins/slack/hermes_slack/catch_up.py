"""Catching up: the messages sent to the bot while the gateway was down, answered once, oldest first.

Slack retries an event nobody acknowledged three times, within about five
minutes (immediately, after 1 min, after 5 min), in Socket Mode (also while
no socket is connected) and over HTTP alike, and then drops it: a message
sent during a longer outage, or a restart that outlasts the retries, is
never delivered. So at start, and each time the Socket Mode connection
comes back, the client reads what it missed in each chat it has a
conversation in that was active within ``conversation.catch_up_window``
(``context.recent_chats``): the channel's history (``conversations.history``
with ``oldest=`` the last message seen there, never before the window) and
the replies in each such thread (``conversations.replies``), every page
(``cursor``) up to :data:`MAX_PAGES`, and hands each message to the core
oldest first, as if its event had just arrived.

Exactly once: a message's update id is ``channel:ts`` whether it came as
an event (``message`` or ``app_mention``, first delivery or retry) or from
history, and the core dedupes by it across restarts and replicas. The last
message seen per channel (and the channel's type) is kept with
``context.set_value``, one write per burst.

Each page is one request through the core's pacing (``context.paced``): a
429 (Tier 3: 50 a minute; 1 a minute for apps distributed outside the
Marketplace) is waited out by the core and the read made again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from hermes_gateway import CatchUpTask, LastSeen

from .errors import translate
from .redaction import scrub

if TYPE_CHECKING:
    from hermes_gateway import PlatformContext

log = logging.getLogger(__name__)

#: Where the last message seen per channel is kept (``context.set_value``): {channel: [ts, channel_type]}.
SEEN_KEY = "catch_up.last_seen"
MAX_CHANNELS = 500
#: Messages asked for per page (Slack recommends no more than 200).
PAGE = 200
#: Pages read per channel or thread in one catch-up.
MAX_PAGES = 5
#: Threads read in one catch-up (one conversations.replies each, at least).
MAX_THREADS = 50


class CatchUp(CatchUpTask):
    """The last message seen per channel, and the catch-up after a start or a reconnect (started, awaited and
    stopped as :class:`hermes_gateway.CatchUpTask` does)."""

    context: "PlatformContext"

    def __init__(self, context: "PlatformContext", web: Callable[[], Any],
                 hand_over: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """``web()``: the client's ``AsyncWebClient``; ``hand_over(body)``: an event body to the core."""
        self._web = web
        self._hand_over = hand_over
        #: channel -> (last ts seen, channel_type), kept with ``context.set_value`` under :data:`SEEN_KEY`
        super().__init__(context, LastSeen(context, order=_ts_order, platform="slack", key=SEEN_KEY,
                                           max_channels=MAX_CHANNELS), name="slack-catch-up")

    async def load(self) -> None:
        await self.last_seen.load()

    def note(self, event: Any) -> None:
        """A person's message event (live or fetched): later catch-ups in its channel start after it."""
        if not isinstance(event, dict):
            return
        channel, ts = event.get("channel"), event.get("ts")
        if not isinstance(channel, str) or not isinstance(ts, str) or not _is_ts(ts):
            return
        known = self.last_seen.get(channel)
        kind = str(event.get("channel_type") or (known[1] if known else ""))
        self.last_seen.note(channel, ts, kind)

    async def read_missed(self) -> None:
        floor = time.time() - self.context.catch_up_window
        try:
            chats = await self.context.recent_chats(self.context.catch_up_window)
        except Exception as exc:
            log.warning("slack: no catch-up: the conversations were not listed (%s)",
                        scrub(f"{type(exc).__name__}: {exc}"))
            return
        channels = list(dict.fromkeys(chat for chat, _ in reversed(chats)))  # the longest waiting first
        threads = [(chat, thread) for chat, thread in reversed(chats) if thread][-MAX_THREADS:]
        for channel in channels:
            oldest = self._oldest(channel, floor)
            found: dict[str, dict[str, Any]] = {}
            try:
                for message in await self._read(channel, "conversations.history", {"oldest": oldest}):
                    found[message["ts"]] = message
                for _, thread in (t for t in threads if t[0] == channel):
                    for message in await self._read(channel, "conversations.replies", {"ts": thread,
                                                                                        "oldest": oldest}):
                        found[message["ts"]] = message
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # this channel only: the others are still read
                log.warning("slack: catching up in channel %s failed: %s", channel,
                            scrub(f"{type(exc).__name__}: {exc}"))
            kind = (self.last_seen.get(channel) or ("", ""))[1] or ("im" if channel.startswith("D") else "channel")
            for ts in sorted((t for t in found if float(t) > float(oldest)), key=float):
                event = {**found[ts], "channel": channel, "channel_type": kind}
                log.info("slack: a message sent while the bot was away, in channel %s", channel)
                await self._hand_over({"event": event, "event_id": "", "type": "event_callback"})

    def _oldest(self, channel: str, floor: float) -> str:
        known = self.last_seen.get(channel)
        if known is not None and float(known[0]) > floor:
            return known[0]
        return f"{floor:.6f}"

    async def _read(self, channel: str, method: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Every page of one history read (each page one paced request); the messages, in any order."""
        messages: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self.context.paced(channel, partial(self._page, method, channel, args, cursor), what=method)
            messages += [m for m in page.get("messages") or [] if isinstance(m, dict) and _is_ts(m.get("ts"))]
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not page.get("has_more") or not cursor:
                break
        return messages

    async def _page(self, method: str, channel: str, args: dict[str, Any], cursor: str | None) -> dict[str, Any]:
        web = self._web()
        read = web.conversations_history if method == "conversations.history" else web.conversations_replies
        try:
            answer = await read(channel=channel, limit=PAGE, **args, **({"cursor": cursor} if cursor else {}))
        except Exception as exc:
            raise translate(exc, method) from None
        return dict(answer.data) if hasattr(answer, "data") else dict(answer)


def _ts_order(ts: str) -> float:
    """A message ``ts`` as a number to compare (a stored value that is not one is dropped)."""
    if not _is_ts(ts):
        raise ValueError(f"not a Slack ts: {ts!r}")
    return float(ts)


def _is_ts(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str)
