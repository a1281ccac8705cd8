"""Text length as platforms count it: UTF-16 code units (Telegram, Discord), where an emoji is often 2;
UTF-8 bytes (Matrix: an event is at most 65,536 bytes), where an accented letter is 2 and an emoji 4.

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


def utf8_length(text: str) -> int:
    """The length of ``text`` in UTF-8 bytes: what a platform limiting a message's bytes counts (Matrix)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def utf8_width(char: str) -> int:
    """The UTF-8 bytes of one character (1 to 4), without encoding it."""
    code = ord(char)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
