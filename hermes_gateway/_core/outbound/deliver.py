"""What an occurrence sends: a schedule's text as is, its prompt through the agent, or a reminder's line.

A prompt runs with the chat's own profile (its ``/model`` and ``/persona``
choices and ``overrides:``, issue 23's :func:`~..operator.turns.prepare_turn`)
and is delivered like any reply: streamed where the platform streams, paced
by the chat's budget. ``conversation: chat`` reads the chat's history and
records the turn in it (the person can answer the summary and be
understood); ``fresh`` does neither.
"""

from __future__ import annotations

import logging
from typing import Any

from ..conversation import TurnParts
from ..delivery import DeliveryReport
from ..messages.incoming import Incoming
from ..store import ConversationKey, StoreError
from ..store.outage import report as report_store_failure
from ..store.outbound_records import Reminder
from .home import resolve_chat
from .send import send_to_chat
from ..settings.outbound import Schedule

log = logging.getLogger(__name__)

#: How a reminder reads in the chat.
REMINDER_LINE = "⏰ Reminder: {text}"


async def deliver_schedule(parts: TurnParts, schedule: Schedule) -> DeliveryReport:
    """Send one occurrence of ``schedule`` into its chat (``home`` resolved to the platform's ``home_chat``)."""
    chat = resolve_chat(parts.config, schedule.platform, schedule.chat)
    if schedule.text is not None:
        return await send_to_chat(parts.delivery(), schedule.platform, chat, schedule.text,
                                  thread_id=schedule.thread)
    return await run_prompt(parts, schedule.platform, chat, schedule.thread, schedule.prompt or "",
                            record=schedule.conversation == "chat")


async def deliver_reminder(parts: TurnParts, reminder: Reminder) -> DeliveryReport:
    """The reminder's line, into the chat it was set in."""
    return await send_to_chat(parts.delivery(), reminder.platform, reminder.chat_id, REMINDER_LINE.format(text=reminder.text),
                              thread_id=reminder.thread_id)


async def run_prompt(parts: TurnParts, platform: str, chat: str, thread: str | None, prompt: str, *,
                     record: bool) -> DeliveryReport:
    """One agent turn for ``prompt`` in the chat, with the chat's model and persona; recorded when ``record``."""
    from ..conversation import reply_in_chat
    from ..operator.turns import prepare_turn

    incoming = Incoming(platform, chat, prompt, thread_id=thread)
    plan = await prepare_turn(parts.config, parts.store(), parts.delivery(), parts.agents(), incoming)
    key = ConversationKey(platform, chat, thread)
    history: list[dict[str, Any]] = []
    if record:
        try:
            history = await parts.store().history(key)
        except StoreError as exc:
            report_store_failure(parts.store(), log, "history not read", exc)
    report, end = await reply_in_chat(parts.config, parts.delivery(), platform, chat, prompt, history=history,
                                      thread_id=thread, agent=plan.agent, settings=plan.stream_settings)
    if record and end is not None and not end.error and not end.interrupted:
        try:
            await parts.store().record_turn(key, end.messages)
        except StoreError as exc:
            report_store_failure(parts.store(), log, "scheduled turn not recorded", exc)
    return report
