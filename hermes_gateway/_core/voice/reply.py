"""The voice note that follows a reply (``voice.reply``): spoken once the text is delivered, sent as the reply's media.

The text is never held back for the speech: the reply streams and ends as
usual, the turn is recorded, and only then is the final text spoken
(:func:`~.speech.speak`) and the voice note sent through the delivery
core's media path — once, within the chat's rate budget, 429s waited out —
as ``Media(kind="audio", mime="audio/ogg", voice=True)``. A speech engine
that fails costs a log line; the person already has the text. A stop
(``/stop``, a new message under ``busy: interrupt``) while the note is
being made drops it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..messages.incoming import Incoming
from ..media import Media
from .speech import speak

if TYPE_CHECKING:
    from ..config import Config
    from ..delivery import Delivery


async def follow_with_voice_note(config: "Config", delivery: "Delivery", incoming: Incoming, text: str,
                                 report: Any) -> None:
    """Speak ``text`` and send it into ``incoming``'s chat; its message joins ``report.media``."""
    try:
        note = await speak(text, config.voice)
        if not isinstance(note, Media):
            return
        session = delivery.session(incoming.platform, incoming.chat_id, thread_id=incoming.thread_id,
                                   chat_kind=incoming.chat_kind, reply_to=incoming.message_id)
        sent = await session.finish("", [note])
    except asyncio.CancelledError:  # stopped: the text stands; a stop is an ordinary end of a turn
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return
    report.media = [*report.media, *sent.media]
