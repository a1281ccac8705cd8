"""Receiving messages: long polling ``getUpdates``, one task per incoming message.

Each text message becomes ``gateway.handle_incoming("telegram", chat_id,
text, thread_id=..., chat_kind=...)`` in its own task, so a slow reply never
holds up another chat. Messages within one chat are answered in the order
they arrived (a per-chat lock), because a conversation's history must not
interleave. Unlike the stream hooks, the poll loop does wait and retry:
nobody else would.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from .errors import retry_after_seconds
from .redaction import scrub

log = logging.getLogger(__name__)

Handler = Callable[..., Awaitable[Any]]

#: Seconds between polls after a network failure: doubles up to the cap, resets after a success.
BACKOFF_FIRST = 1.0
BACKOFF_CAP = 30.0


class Poller:
    """One long-polling loop for one bot, plus the reply tasks it started."""

    def __init__(self, bot: Any, handle: Handler, *, poll_timeout: int = 30,
                 allows: Callable[[str], bool] = lambda chat_id: True, reply_grace: float = 5.0) -> None:
        self.bot = bot
        self.handle = handle
        self.poll_timeout = poll_timeout
        self.allows = allows
        self.reply_grace = reply_grace
        self.offset: int | None = None
        self._acked: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._replies: set[asyncio.Task[Any]] = set()
        self._chat_locks: dict[str, asyncio.Lock] = {}
        self._chat_waiting: dict[str, int] = {}

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="telegram-poll")

    async def stop(self) -> None:
        """Stop polling, confirm what was received, let replies in flight finish (then cancel them)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._confirm_received()
        if self._replies:
            _, pending = await asyncio.wait(set(self._replies), timeout=self.reply_grace)
            for reply in pending:
                reply.cancel()  # the core keeps what was shown, without cursor
            await asyncio.gather(*pending, return_exceptions=True)

    async def _run(self) -> None:
        from telegram import error as tg

        backoff = BACKOFF_FIRST
        while True:
            try:
                updates = await self.bot.get_updates(offset=self.offset, timeout=self.poll_timeout,
                                                     allowed_updates=["message"])
            except asyncio.CancelledError:
                raise
            except tg.RetryAfter as exc:
                await asyncio.sleep(retry_after_seconds(exc))
                continue
            except (tg.InvalidToken, tg.Forbidden) as exc:
                log.error("telegram: stopped receiving messages: %s (check platforms.telegram.token)",
                          scrub(type(exc).__name__))
                return
            except Exception as exc:  # network trouble, a 5xx, a Conflict with another poller
                log.warning("telegram: getUpdates failed (%s); retrying in %gs",
                            scrub(f"{type(exc).__name__}: {exc}"), backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_CAP)
                continue
            backoff = BACKOFF_FIRST
            self._acked = self.offset
            for update in updates:
                self.offset = update.update_id + 1
                self._dispatch(update)

    def _dispatch(self, update: Any) -> None:
        message = update.message
        if message is None or message.text is None or message.chat is None:
            return  # photos, joins, edits: nothing to answer
        chat_id = str(message.chat.id)
        if not self.allows(chat_id):
            log.info("telegram: ignored a message from chat %s (not in platforms.telegram.allowed_chats)", chat_id)
            return
        thread_id = str(message.message_thread_id) if message.is_topic_message and message.message_thread_id else None
        chat_kind = str(getattr(message.chat.type, "value", message.chat.type))  # PTB's ChatType enum -> "group"
        reply = asyncio.get_running_loop().create_task(
            self._answer(chat_id, message.text, thread_id, chat_kind, str(message.message_id)),
            name=f"telegram-reply-{chat_id}")
        self._replies.add(reply)
        reply.add_done_callback(self._replies.discard)

    async def _answer(self, chat_id: str, text: str, thread_id: str | None, chat_kind: str, message_id: str) -> None:
        lock = self._chat_locks.setdefault(chat_id, asyncio.Lock())
        self._chat_waiting[chat_id] = self._chat_waiting.get(chat_id, 0) + 1
        try:
            async with lock:
                await self.handle("telegram", chat_id, text, thread_id=thread_id, chat_kind=chat_kind,
                                  reply_to=message_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("telegram: answering a message in chat %s failed: %s", chat_id,
                      scrub(f"{type(exc).__name__}: {exc}"))
        finally:
            self._chat_waiting[chat_id] -= 1
            if not self._chat_waiting[chat_id]:  # forget idle chats, keep the lock while others wait
                del self._chat_waiting[chat_id]
                self._chat_locks.pop(chat_id, None)

    async def _confirm_received(self) -> None:
        """Tell Telegram which updates we took, so a restart does not answer them twice."""
        if self.offset is None or self.offset == self._acked:
            return
        try:
            await self.bot.get_updates(offset=self.offset, timeout=0, limit=1, allowed_updates=["message"])
            self._acked = self.offset
        except Exception as exc:
            log.warning("telegram: could not confirm received updates: %s", scrub(f"{type(exc).__name__}: {exc}"))
