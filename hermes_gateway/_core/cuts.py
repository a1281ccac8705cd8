"""Which reply tasks were cut by the gateway itself (shutdown, a chat's lease lost), not by the person.

The lane that cuts a reply marks its task here; the turn, which runs in
that task, asks :func:`cut_here` when it is cancelled: the person was not
told, so the turn leaves its reply in flight to crash recovery instead of
recording it. A plain registry beneath both, so the turn never imports the
inbound runtime for it.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

#: Reply tasks cut by something other than the person (shutdown, the chat's lease lost to another replica).
CUT_TASKS: "weakref.WeakSet[asyncio.Task[Any]]" = weakref.WeakSet()


def cut_here() -> bool:
    """Whether the running reply task was cut by shutdown or a lost lease (see :data:`CUT_TASKS`)."""
    task = asyncio.current_task()
    return task is not None and task in CUT_TASKS
