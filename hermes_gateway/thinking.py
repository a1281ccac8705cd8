"""Removing ``<think>``-style reasoning blocks from a finished reply.

Reasoning models wrap their chain of thought in ``<think>``, ``<thinking>``
or ``<reasoning>`` tags. A person must never see it, so the final reply is
cleaned here. This works on *complete* text only; the delivery engine does
its own incremental scrubbing while a reply is still streaming.
"""

from __future__ import annotations

import re

THINK_TAGS: tuple[str, ...] = ("think", "thinking", "reasoning")

_NAMES = "|".join(THINK_TAGS)
# A closed block, plus the whitespace after it (models write "</think>\n\nAnswer").
_BLOCK = re.compile(rf"<\s*({_NAMES})\b[^>]*>.*?<\s*/\s*\1\s*>\s*", re.IGNORECASE | re.DOTALL)
# An opening tag that is never closed: the model was cut off while thinking.
_UNCLOSED = re.compile(rf"<\s*({_NAMES})\b[^>]*>.*\Z", re.IGNORECASE | re.DOTALL)
# A closing tag with no opening one: chat templates that put "<think>" in the
# prompt make the model's output start inside the block.
_ORPHAN_CLOSE = re.compile(rf"\A.*?<\s*/\s*({_NAMES})\s*>\s*", re.IGNORECASE | re.DOTALL)
_OPEN_ANY = re.compile(rf"<\s*({_NAMES})\b", re.IGNORECASE)


def strip_thinking(text: str) -> str:
    """``text`` without reasoning blocks (closed, unclosed at the end, or opened in the prompt)."""
    if "<" not in text:
        return text
    match = _ORPHAN_CLOSE.match(text)
    if match and not _OPEN_ANY.search(text, 0, match.start(1)):
        text = text[match.end():]
    text = _BLOCK.sub("", text)
    return _UNCLOSED.sub("", text)


def postprocess_reply(raw: str) -> str:
    """The reply a person sees: reasoning removed, leading blank lines and trailing whitespace trimmed."""
    return strip_thinking(raw).lstrip("\r\n").rstrip()
