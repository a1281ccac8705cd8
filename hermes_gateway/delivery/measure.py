"""Message length in the platform's own unit.

Telegram counts UTF-16 code units (an emoji outside the BMP counts 2);
most others count characters. Getting this wrong means a 400 on the last
chunk of a long reply, so every limit check goes through here.
"""

from __future__ import annotations

from typing import Callable

Measure = Callable[[str], int]


def utf16_length(text: str) -> int:
    if text.isascii():
        return len(text)
    # encoding runs in C: a preview with a cursor is never ASCII, and this runs on every one
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def measure_for(unit: str) -> Measure:
    return utf16_length if unit == "utf16" else len


def longest_prefix_within(text: str, budget: int, measure: Measure) -> int:
    """The largest ``n`` with ``measure(text[:n]) <= budget``."""
    if budget <= 0:
        return 0
    if measure is len or text.isascii():
        return min(len(text), budget)
    used = 0
    for i, ch in enumerate(text):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > budget:
            return i
    return len(text)
