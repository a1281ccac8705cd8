"""A message of a reply as the person sees it: what the delivery core reports and the store keeps for recovery.

A plain value beneath both: the delivery session makes it after each
platform call, the conversation store records it (crash recovery reads it
back), and neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShownMessage:
    """One message of a reply in flight as the person sees it: which message, and its text without cursor."""

    message_id: str
    chat_id: str
    thread_id: str | None
    text: str               # what it shows, minus the cursor and the tool progress line
    ended: bool = False     # already ended with ``on_stream_end`` (no cursor on it)
