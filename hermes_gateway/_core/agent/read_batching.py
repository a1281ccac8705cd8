"""How long a streamed upstream read may wait for more of the answer, where nobody sees each token.

A chat on a messaging platform shows a growing reply at most once per
preview interval (a second or more), yet reading each token the moment it
arrives costs a loop wake-up, a socket read and a pass through the agent's
generators per token: at a thousand replies streaming at once that was most
of the gateway's CPU per upstream chunk (bench/README.md, issue 39). A
platform reply's reads therefore batch: a read of the answer's body returns
what arrived since the last one, but not before :data:`READ_BATCH` seconds
have passed since that last one. The answer's end, an error or a full
buffer end the wait at once, so the final text is not later; the first read
of a body never waits, so the first text is not later either. Set by the
conversation for the turn's task (:func:`batching_reads`); left at 0 for the
API server, whose clients see every chunk.
"""

from __future__ import annotations

from contextvars import ContextVar

#: Seconds a streamed body's read waits after the previous one (0: none). Read once per upstream request.
READ_BATCH: ContextVar[float] = ContextVar("hermes_gateway_read_batch", default=0.0)

#: The longest wait: a quarter of Telegram's one edit a second, well under what a person notices in a preview.
MAX_READ_BATCH = 0.25


def read_batch_for(previews_per_second: float) -> float:
    """A quarter of the chat's preview interval, at most :data:`MAX_READ_BATCH` (a chat that may show a new preview
    20 times a second, such as a terminal, batches reads for 12.5 ms)."""
    if previews_per_second <= 0:
        return MAX_READ_BATCH
    return min(MAX_READ_BATCH, 0.25 / previews_per_second)
