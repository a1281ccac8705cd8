"""A short text answer to a message the model cannot read (a photo, a voice note, a sticker).

Silence would leave the person wondering whether the bot is there at all.
The notice is a fixed text, not a turn of the model, so it does not go
through ``gateway.receive``; it still gets what the core gives every
message: dedupe by message id (Meta redelivers), the access lists
(``allowed_users``), and delivery through the core (the chat's budget,
429s, splitting).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from hermes_gateway import Incoming

log = logging.getLogger(__name__)

NOTICE = "Sorry, I can only read text messages. Please type your question."


class Notices:
    """Sends notices beside the inbound runtime, and lets the ones in flight finish at stop."""

    def __init__(self, text: str = NOTICE) -> None:
        self.text = text
        self._tasks: set[asyncio.Task[Any]] = set()

    def answer(self, gateway: Any, incoming: Incoming, kind: str) -> bool:
        """Send the notice for ``incoming`` unless the core would ignore that message; True if sent."""
        runtime = gateway.inbound
        if not runtime.accepting or not runtime.seen.first_time(incoming.platform, incoming.update_id):
            return False
        refused = runtime.access(incoming.platform).allows(incoming)
        if refused is not None:
            log.info("whatsapp: ignored a %s message: %s", kind, refused)
            return False
        from hermes_gateway.conversation import send_text

        task = asyncio.get_running_loop().create_task(send_text(gateway, incoming, self.text),
                                                      name=f"whatsapp-notice:{incoming.chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return True

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("whatsapp: sending the text-only notice failed: %s", task.exception())

    async def drain(self, grace: float) -> None:
        """Let notices in flight finish within ``grace`` seconds, then cancel the rest."""
        if not self._tasks:
            return
        _, late = await asyncio.wait(set(self._tasks), timeout=grace)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)
