"""One turn of a conversation in a chat: the agent's events streamed into the chat.

This is where an inbound message becomes a delivered reply. It keeps each
chat's history in memory (bounded), so a person can talk to the bot across
several messages; persistent history is a later concern.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

from .config import Config
from .delivery import Delivery, DeliveryReport, deliver_events
from .events import TurnEnd

#: How many messages of history one chat keeps, and how many chats are remembered.
HISTORY_MESSAGES = 40
REMEMBERED_CHATS = 1000
#: What a chat shows when the model failed before saying anything.
FAILURE_NOTICE = "⚠️ Sorry, I could not get an answer from the model just now. Please try again in a moment."


class Conversations:
    """Histories per (platform, chat, thread), least recently used forgotten first."""

    def __init__(self) -> None:
        self._histories: OrderedDict[tuple[str, str, str | None], list[dict[str, Any]]] = OrderedDict()

    def history(self, platform: str, chat_id: str, thread_id: str | None = None) -> list[dict[str, Any]]:
        key = (platform, str(chat_id), thread_id)
        history = self._histories.pop(key, None) or []
        self._histories[key] = history
        while len(self._histories) > REMEMBERED_CHATS:
            self._histories.popitem(last=False)
        return history

    def remember(self, history: list[dict[str, Any]], user_text: str, reply: str) -> None:
        history.extend([{"role": "user", "content": user_text}, {"role": "assistant", "content": reply}])
        del history[:-HISTORY_MESSAGES]


async def reply_in_chat(config: Config, delivery: Delivery, platform: str, chat_id: str, text: str, *,
                        history: list[dict[str, Any]] | None = None, thread_id: str | None = None,
                        chat_kind: str | None = None, reply_to: str | None = None,
                        agent: Any = None) -> tuple[DeliveryReport, TurnEnd | None]:
    """Run one agent turn for ``text`` and deliver it into the chat."""
    from .agent import AIAgent  # the agent pulls in the openai SDK: import it when a turn runs

    owned = agent is None  # an agent made for this one turn is closed after it (its connection pool)
    agent = agent or AIAgent.from_config(config)
    turn: list[TurnEnd] = []

    async def events():
        async for event in agent.astream(text, history=list(history or [])):
            if isinstance(event, TurnEnd):
                turn.append(event)
                if event.error and not event.reply.strip() and not event.interrupted:
                    # the person must not be left with silence; the details go to the log, not the chat
                    event = replace(event, reply=FAILURE_NOTICE)
            yield event

    session = delivery.session(platform, chat_id, thread_id=thread_id, chat_kind=chat_kind, reply_to=reply_to)
    try:
        report = await deliver_events(events(), session)
    finally:
        if owned:
            await agent.aclose()
    end = turn[0] if turn else None
    if end is not None and end.error and not report.text:
        report.error = report.error or end.error
    return report, end


async def answer(gateway: Any, platform: str, chat_id: str, text: str, *, thread_id: str | None = None,
                 chat_kind: str | None = None, reply_to: str | None = None, **_: Any) -> DeliveryReport:
    """The gateway's handler for an inbound message (called by ``Gateway.handle_incoming``)."""
    if getattr(gateway, "conversations", None) is None:
        gateway.conversations = Conversations()
    history = gateway.conversations.history(platform, chat_id, thread_id)
    report, end = await reply_in_chat(gateway.config, gateway.delivery, platform, chat_id, text, history=history,
                                      thread_id=thread_id, chat_kind=chat_kind, reply_to=reply_to,
                                      agent=getattr(gateway, "agent", None))
    if end is not None and end.reply and not end.error:
        gateway.conversations.remember(history, text, end.reply)
    return report
