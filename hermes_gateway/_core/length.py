"""Text length as platforms count it: UTF-16 code units (Telegram, Discord), where an emoji is often 2.

A module of its own at the bottom of the core, so that the delivery core
(which measures every preview) and the public helpers for plugins share
one definition without either importing the other.
"""

from __future__ import annotations


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units: what Telegram and Discord count (an emoji is often 2)."""
    if text.isascii():
        return len(text)
    # encoding runs in C: a preview with a cursor is never ASCII, and the core measures every one
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
