"""Messages from other bots: ignored (``groups.bots: ignore``, the default) or answered when they mention this
one (``mentions``), within a loop guard.

Two bots that answer each other would talk forever, each reply one more
message for the other. With ``mentions``, a bot is answered only when it
mentions (or replies to) this bot, whatever ``require_mention`` says, and at
most ``groups.max_bot_turns`` of its messages per chat per
:data:`~..settings.groups.BOT_TURN_WINDOW` (10 minutes) are answered. Past
that: ONE warning in the log, then silence until the window ends. Nothing is
said in the chat: a line there would be one more bot-visible message for the
other bot to answer, and silence is what ends a loop.

The count is the coordination's (:meth:`..coordination.base.Coordination.count`):
with Redis it is one counter for every replica, so two replicas together
answer no more than one would; alone it is this process's.

A bot's message that is not answered (ignored, or not mentioning this bot)
may still be kept as the room's context (:mod:`.room`) when the chat keeps
some: a CI bot's "build failed" is part of what the room talks about; it is
given to the model marked "(bot)", as context, never as a request.
"""

from __future__ import annotations

import logging
from typing import Any

from ..messages.incoming import Incoming
from ..settings.groups import BOT_TURN_WINDOW, GroupSettings

log = logging.getLogger(__name__)

#: How every reason for dropping a bot's message starts (the runtime logs those at debug, not info).
FROM_BOT = "from a bot"


def bot_refusal(incoming: Incoming, settings: GroupSettings) -> str | None:
    """None when a bot's message may be answered (before the loop guard); otherwise why not."""
    if settings.bots != "mentions":
        return f"{FROM_BOT} (groups.bots: ignore)"
    if not incoming.mentioned and not incoming.is_direct:
        return f"{FROM_BOT} that does not mention this one (groups.bots: mentions)"
    return None


async def within_guard(coordination: Any, incoming: Incoming, settings: GroupSettings) -> bool:
    """Count one bot-to-bot reply in the chat; False past ``max_bot_turns`` in the window (logged once)."""
    turns = await coordination.count(f"bot-turns:{incoming.platform}:{incoming.chat_id}", BOT_TURN_WINDOW)
    if turns <= settings.max_bot_turns:
        return True
    if turns == settings.max_bot_turns + 1:
        log.warning("%s: chat %s: %d bot-to-bot replies within %d minutes (groups.max_bot_turns); not answering "
                    "bots there until the window ends", incoming.platform, incoming.chat_id,
                    settings.max_bot_turns, BOT_TURN_WINDOW // 60)
    else:
        log.debug("%s: ignored a bot's message in chat %s: the loop guard (groups.max_bot_turns)",
                  incoming.platform, incoming.chat_id)
    return False
