"""Sending status reactions: through the chat's budget and 429 handling, "seen" at once when a call is spare.

The core calls :meth:`Reactor.mark` when a message is taken (``received``),
when its reply is final (``done``) and when it failed (``failed``). Each
reaction is a task of its own beside the chat's lane, so a reply never
waits for one. It spends a call of the chat's budget and of the bot's (the
replicas' shared budgets too, with ``coordination.url``), like any call
into the chat, and waits for it like any call: a reaction is never a reason
for a 429.

**"Seen" at once.** A ``received`` reaction goes at once when the chat's
bucket holds a call: in a Telegram private chat (burst 1) the 👀 is on the
person's message while the model still thinks, and the reply's first text
waits at most one refill for the call it took. When the bucket is empty
and a reply in the chat is waiting for its first text
(``first_text_pending``), the reaction goes only when a spare call stays for
that text beside it (a group's burst), or after the text.

Every call goes through the one path of calls into a chat
(:func:`~hermes_gateway._core.delivery.calls.call_into_chat`): a 429 blocks
the chat and the reaction is made once ``retry_after`` has passed.

A message's reactions go in order (the last one set is what stays on
Telegram, which keeps one per bot): a ``done`` that comes before the
``received`` was sent replaces it. A reaction that fails is logged once and
forgotten; one still waiting after :data:`MAX_WAIT` seconds (429 waits
added) is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Callable

from ..delivery.calls import FAILED, call_into_chat
from ..delivery.pacing import Pacer
from ..settings.reactions import ReactionSettings, platform_form

if TYPE_CHECKING:
    from ..delivery import Delivery
    from ..messages.incoming import Incoming

log = logging.getLogger(__name__)

#: Seconds between looks at the chat while a reaction waits (for the budget, or for a reply's first text).
POLL = 0.05
#: A reaction not sent within this many seconds is dropped: it would mark a moment long gone.
MAX_WAIT = 120.0

FirstTextPending = Callable[[], bool]
_Key = tuple[str, str, str]


class Reactor:
    """The status reactions of one gateway."""

    def __init__(self, settings: ReactionSettings, delivery: "Delivery") -> None:
        self.settings = settings
        self.delivery = delivery
        self._tasks: dict[_Key, asyncio.Task[None]] = {}
        self._sending: set[_Key] = set()   # messages whose reaction call is out (it is not replaced then)

    def can_react(self, platform: str) -> bool:
        """The platform's running client has a ``react`` method."""
        return callable(getattr(self.delivery.clients(platform), "react", None))

    def mark(self, incoming: "Incoming", stage: str, first_text_pending: FirstTextPending = lambda: False) -> None:
        """React to ``incoming`` for ``stage`` (``received``/``done``/``failed``) if configured; returns at once."""
        emoji = self.settings.emoji(stage)
        if emoji is None or not incoming.message_id or not self.can_react(incoming.platform):
            return
        key = (incoming.platform, incoming.chat_id, incoming.message_id)
        before = self._tasks.get(key)
        if before is not None and not before.done() and key not in self._sending:
            before.cancel()  # not sent yet: this later status replaces it
            before = None
        task = asyncio.get_running_loop().create_task(
            self._react(key, incoming.chat_kind, incoming.thread_id, emoji, first_text_pending, before),
            name=f"react:{stage}")
        self._tasks[key] = task
        task.add_done_callback(lambda t: self._tasks.pop(key, None) if self._tasks.get(key) is t else None)

    async def close(self) -> None:
        """Drop reactions still waiting (the gateway stops); a call already out gets a moment to land."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)

    async def _react(self, key: _Key, chat_kind: str | None, thread_id: str | None, emoji: str,
                     pending: FirstTextPending,
                     before: "asyncio.Task[None] | None") -> None:
        platform, chat_id, message_id = key
        if before is not None:
            await asyncio.wait([before])
        pacer = self.delivery.pacer(platform, chat_id, chat_kind)
        if not await self._wait_turn(pacer, pending):
            log.info("%s: a %s reaction in chat %s waited %gs and was dropped", platform, emoji, chat_id, MAX_WAIT)
            return
        client = self.delivery.clients(platform)
        react = getattr(client, "react", None)
        if not callable(react):
            return
        allowed = getattr(client, "reaction_emoji", None)
        if allowed is not None:
            emoji = platform_form(emoji, allowed) or emoji
        self._sending.add(key)
        try:  # the one path of calls into a chat: a 429 is waited out and the reaction made after it
            outcome = await call_into_chat(
                pacer, lambda: react(chat_id=chat_id, message_id=message_id, emoji=emoji, thread_id=thread_id),
                what=f"reaction {emoji}", label=f"{platform}/{chat_id}", deadline=pacer.now() + MAX_WAIT,
                max_retries=0, claim=True)
        finally:
            self._sending.discard(key)
        if outcome.failure not in (None, FAILED):  # a failed call was logged by the path; forgotten either way
            log.warning("%s: reaction %s in chat %s not set (%s)", platform, emoji, chat_id, outcome.failure)

    @staticmethod
    async def _wait_turn(pacer: Pacer, pending: FirstTextPending) -> bool:
        """Wait until the reaction may go. False after :data:`MAX_WAIT`.

        At once when the chat's budget holds a call nobody claims: a reply's
        first text then waits at most one refill. Else, while a reply's first
        text is pending, only when a call stays for that text beside it; once
        no first text is pending, the reaction claims the chat's next token
        (``ChatBudget.claims``): a streaming reply's previews, which take every
        token as it comes, then let it through.
        """
        give_up = pacer.now() + MAX_WAIT
        budget = pacer.budget
        claimed = False
        keep = 0.0  # the first look leaves nothing for the text: the 👀 says "seen" while the model thinks
        try:
            while True:
                now = pacer.now()
                if now >= give_up:
                    return False
                spare = budget.available(now) >= 1.0 + keep + budget.claims - claimed
                keep = 1.0  # from now on a call stays for the text
                if spare or not pending():
                    if not claimed:
                        budget.claims += 1
                        claimed = True
                    at = pacer.ready_at(now, reserve=-float(budget.claims))  # claimants take turns
                    if at <= now:
                        return True
                    await asyncio.sleep(max(at - now, 1e-3))
                    continue
                await asyncio.sleep(POLL)
        finally:
            if claimed:
                budget.claims -= 1
