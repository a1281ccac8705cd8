"""What Telegram counts of a text, and what a split must not cut: two of the platform's declared limits.

Both are handed to the core in ``Platform(keep_whole=..., rendered_length=...)``
and used by the client when a server refuses a final text as too long.
markdown-it-py is imported lazily (by :mod:`.formatting`): without it,
messages go out as plain text, so any cut will do and the text itself counts.
"""

from __future__ import annotations

from hermes_gateway import utf16_length


def keep_whole_ranges(text: str) -> list[tuple[int, int]]:
    """``Platform.keep_whole``: the Markdown ranges a split must not cut (:func:`.formatting.keep_whole`)."""
    try:
        from .formatting import keep_whole
    except ImportError:  # no markdown-it-py: messages go out as plain text, any cut will do
        return []
    return keep_whole(text)


def rendered_length(text: str) -> int:
    """``Platform.rendered_length``: what Telegram counts of ``text`` once converted (UTF-16 units, no markers)."""
    try:
        from .formatting import render
    except ImportError:  # no markdown-it-py: sent as plain text, so the text itself counts
        return utf16_length(text)
    return utf16_length(render(text)[0])
