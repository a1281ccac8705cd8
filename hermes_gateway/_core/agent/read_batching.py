"""How long a streamed upstream read may wait for more of the answer, where nobody sees each token.

A chat on a messaging platform shows a growing reply at most once per
preview interval (a second or more), yet reading each token the moment it
arrives costs a loop wake-up, a socket read and a pass through the agent's
generators per token: at a thousand replies streaming at once that was most
of the gateway's CPU per upstream chunk (bench/README.md, issue 39). A
chat reply's reads therefore batch: a read of the answer's body returns
what arrived since the last one, but not before :attr:`ReadBatch.seconds`
have passed since that last one. The answer's end, an error or a full
buffer end the wait at once, so the final text is not later.

The conversation puts a :class:`ReadBatch` in :data:`READ_BATCH` for the
turn's task and sets its ``seconds`` once the reply has its
``streaming.min_tokens`` (at once when it shows no previews): the token that
completes them may start the first text at once, so the first text is not
later either; from then on text shows once per preview interval, or when the
bot's budget allows, whatever arrived in between. Texts read together also
go on as one delta then (``stream_chat``; not before: the delivery counts
deltas towards ``min_tokens``). The API server and the terminal put none:
their readers see every chunk.
"""

from __future__ import annotations

from contextvars import ContextVar

#: The longest wait: a quarter of Telegram's one edit a second, well under what a person notices in a preview.
MAX_READ_BATCH = 0.25


class ReadBatch:
    """How long the reads of one chat reply wait now (0: not yet). Read by the reader at each read."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds


#: The current turn's batch, if its reads may wait (None: every chunk as it comes). Read once per upstream request.
READ_BATCH: ContextVar[ReadBatch | None] = ContextVar("hermes_gateway_read_batch", default=None)


def read_batch_for(preview_interval: float) -> float:
    """A quarter of the chat's preview interval, at most :data:`MAX_READ_BATCH` (a chat that may show a new preview
    20 times a second, such as the web console, batches reads for 12.5 ms)."""
    return min(MAX_READ_BATCH, max(0.0, preview_interval) / 4)
