"""Approval buttons on WhatsApp: interactive reply buttons, and the ``button_reply`` a tap sends back.

``offer_choice`` sends the question as an interactive message with up to
three reply buttons (each id the core's payload, titles at most 20
characters). WhatsApp cannot edit what the business sent, so
``close_choice`` sends the outcome as a new message quoting the question.
A tap arrives in the webhook as an ``interactive`` message; it becomes a
``ChoiceAnswer`` for ``context.choose``, and the core's line goes back to
the person who tapped (a 1:1 chat: only they see it).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from hermes_gateway import Choice, ChoiceAnswer, MessageRef, PlatformContext, Stream

from .redaction import scrub

log = logging.getLogger(__name__)

NAME = "whatsapp"
MAX_TITLE = 20
MAX_BODY = 1024


def interactive_payload(to: str, choice: Choice) -> dict[str, Any]:
    buttons = [{"type": "reply", "reply": {"id": choice.payload(option), "title": option.label[:MAX_TITLE]}}
               for option in choice.options[:3]]
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "interactive",
            "interactive": {"type": "button", "body": {"text": choice.prompt[:MAX_BODY]},
                            "action": {"buttons": buttons}}}


async def offer_choice(client: Any, stream: Stream, choice: Choice) -> MessageRef:
    answer = await client.graph._post(interactive_payload(stream.chat_id, choice), "send", stream.chat_id)
    return MessageRef(stream.chat_id, str(answer["messages"][0]["id"]), stream.thread_id)


async def close_choice(client: Any, stream: Stream, ref: MessageRef, text: str) -> None:
    await client.graph.send_text(stream.chat_id, text, quote=ref.message_id)


class Taps:
    """Button taps handed to the core, each answered with the core's line, beside the webhook's answer."""

    def __init__(self, context: PlatformContext, graph: Any) -> None:
        self.context = context
        self._graph = graph
        self._tasks: set[asyncio.Task[None]] = set()

    def take(self, sender: str, reply_id: str | None) -> bool:
        """Handle a tap on one of our buttons (True); anything else is an ordinary message (False)."""
        answer = ChoiceAnswer.from_payload(NAME, sender, sender, reply_id or "")
        if answer is None:
            return False
        task = asyncio.get_running_loop().create_task(self._answer(answer), name="whatsapp-tap")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _answer(self, answer: ChoiceAnswer) -> None:
        notice = await self.context.choose(answer)
        if not notice:
            return
        try:
            await self._graph().send_text(answer.chat_id, notice)
        except Exception as exc:
            log.info("whatsapp: answering a button tap failed: %s", scrub(f"{type(exc).__name__}: {exc}"))
