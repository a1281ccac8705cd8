"""What a person's edit of a message they sent does to the chat's lane (``conversation.on_edit: answer``).

* an edit of a message still queued replaces it there: the turn answers the edited text;
* an edit of a message being answered stops that reply (what was shown stays, marked superseded in
  one short line, see :data:`SUPERSEDED_NOTE`) and the edited text is answered next, first in line;
* an edit of an older message (answered, or never taken) is ignored; a message counts as answered once its
  reply is on the screen in full, even while the turn is still being recorded.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from ..coordination.base import NO_TICKET
from ..messages.incoming import Incoming
from .lane import ChatLane, TextTurn

#: The line the stopped reply ends with (Markdown, rendered like the reply).
SUPERSEDED_NOTE = "_✏️ Superseded by your edit._"

EditOutcome = Literal["replaced", "superseded", "unchanged"]


def apply_edit(lane: ChatLane, edited: Incoming, future: "asyncio.Future[Any]",
               ticket: int = NO_TICKET) -> EditOutcome | None:
    """Apply ``edited`` (``edit_of`` set) to ``lane``; None when it edits no message queued or being answered.

    ``"unchanged"``: the text is what it was (platforms report other changes as edits too): nothing happens.
    """
    target = edited.edit_of
    for item in lane.items:
        if isinstance(item, TextTurn):
            for i, message in enumerate(item.messages):
                if message.message_id == target:
                    if message.text == edited.text:  # a change the person cannot see (Telegram, a link preview)
                        return "unchanged"
                    item.messages[i] = edited
                    item.futures.append(future)
                    return "replaced"
    running = lane.running
    if isinstance(running, TextTurn) and not running.answered and any(m.message_id == target for m in running.messages):
        if all(m.text == edited.text for m in running.messages if m.message_id == target):
            return "unchanged"
        messages = [edited if m.message_id == target else m for m in running.messages]
        running.superseded = True
        lane.items.insert(0, TextTurn(messages, [future], ticket if ticket != NO_TICKET else running.ticket))
        lane.cancel_running()
        return "superseded"
    return None
