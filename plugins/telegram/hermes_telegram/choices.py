"""Approval buttons on Telegram: an inline keyboard, and the ``callback_query`` a press sends back.

``offer_choice`` sends the question with one button per option (its
``callback_data`` is the core's payload, under Telegram's 64 bytes);
``close_choice`` edits the message to the outcome, which removes the
keyboard. A press becomes a ``ChoiceAnswer`` for ``context.choose``; its
answer line is shown to the presser only, as the callback's toast.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from hermes_gateway import Choice, ChoiceAnswer, MessageRef, PlatformContext, Stream

from .redaction import scrub

log = logging.getLogger(__name__)

def keyboard(choice: Choice) -> Any:
    """One row of buttons, one per option."""
    from telegram import InlineKeyboardButton, InlineKeyboardMarkup

    return InlineKeyboardMarkup([[InlineKeyboardButton(option.label, callback_data=choice.payload(option))
                                  for option in choice.options]])


def answer_of(update: Any) -> ChoiceAnswer | None:
    """The press a ``callback_query`` update stands for; None when it is not one of ours."""
    query = getattr(update, "callback_query", None)
    if query is None or query.message is None or query.from_user is None:
        return None
    return ChoiceAnswer.from_payload("telegram", str(query.message.chat.id), str(query.from_user.id),
                                     query.data or "")


class CallbackAnswers:
    """Hands presses to the core and answers each ``callback_query`` (the toast), beside the poll loop."""

    def __init__(self, context: PlatformContext) -> None:
        self.context = context
        self._tasks: set[asyncio.Task[None]] = set()

    def take(self, update: Any) -> bool:
        """Handle ``update`` if it is a button press (True), else leave it (False)."""
        query = getattr(update, "callback_query", None)
        if query is None:
            return False
        task = asyncio.get_running_loop().create_task(self._answer(query, answer_of(update)),
                                                      name="telegram-callback")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _answer(self, query: Any, answer: ChoiceAnswer | None) -> None:
        notice = await self.context.choose(answer) if answer is not None else None
        try:  # Telegram shows a spinner on the button until the query is answered
            await query.answer(text=notice or None)
        except Exception as exc:
            log.info("telegram: answerCallbackQuery failed: %s", scrub(f"{type(exc).__name__}: {exc}"))

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)


async def offer_choice(client: Any, stream: Stream, choice: Choice) -> MessageRef:
    """Send the question with its buttons into the stream's chat."""
    from .client import _thread

    markup = keyboard(choice)
    chat_id, sent = await client._into_chat(stream, "sendMessage", lambda chat: client.bot.send_message(
        chat, choice.prompt, reply_markup=markup, message_thread_id=_thread(stream)))
    return MessageRef(chat_id=str(chat_id), message_id=str(sent.message_id), thread_id=stream.thread_id)


async def close_choice(client: Any, stream: Stream, ref: MessageRef, text: str) -> None:
    """Replace the question by its outcome; an edit without ``reply_markup`` removes the keyboard."""
    await client._into_chat(stream, "editMessageText", lambda chat: client.bot.edit_message_text(
        text, chat_id=ref.chat_id, message_id=int(ref.message_id)))
