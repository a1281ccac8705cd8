"""The ranges of a Markdown text a split must not cut, for platforms that render Markdown themselves.

Why: Discord and Slack render ``**bold**``, links and code blocks from the
text as sent. A reply cut into two messages inside ``**a bold phrase**``
shows ``**a bold`` in one and ``phrase**`` in the other, markers and all.
:func:`markdown_keep_whole` is a ready ``Platform.keep_whole`` for them:
the core then cuts before such a range, which moves whole into the next
message (a range longer than a message is no constraint, see
``delivery/split.py``).

It is a scanner, not a parser: closed code fences, tables, and inline
spans that open and close within one paragraph (bold, italic,
strikethrough, inline code, links and images, autolinks). Code blocks are
found first and nothing inside them counts. A plugin with a real parser
(Telegram's, on markdown-it) declares its own, exact ranges.
"""

from __future__ import annotations

import re

from .tables import find_tables

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
_ANY = r"(?:[^\n]|\n(?![ \t]*\n))"   # any character but a blank line: an inline span stays in its paragraph
_INLINE = re.compile("|".join([
    r"`[^`\n]+`",                                                   # inline code
    r"!?\[[^\]\n]+\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"\n]*\")?\)",  # link or image
    r"<https?://[^>\s]+>",                                           # autolink
    rf"\*\*(?=\S){_ANY}*?(?<=\S)\*\*",                              # bold
    rf"(?<!\w)__(?=\S){_ANY}*?(?<=\S)__(?!\w)",                     # bold, underscores
    rf"~~(?=\S){_ANY}*?(?<=\S)~~",                                  # strikethrough
    rf"(?<![*\w])\*(?=[^\s*]){_ANY}*?(?<=[^\s*])\*(?![*\w])",       # italic
    rf"(?<![_\w])_(?=[^\s_]){_ANY}*?(?<=[^\s_])_(?![_\w])",         # italic, underscore
]))


def markdown_keep_whole(text: str) -> list[tuple[int, int]]:
    """``Platform.keep_whole`` for a platform that renders the Markdown it is sent (module doc)."""
    blocks = _code_blocks(text)
    spans = list(blocks)
    spans.extend((t.start, t.end) for t in find_tables(text))
    at = 0
    for start, end in blocks + [(len(text), len(text))]:
        spans.extend(_inline_spans(text, at, start))
        at = end
    return spans


def _code_blocks(text: str) -> list[tuple[int, int]]:
    """Closed fenced code blocks, from their opening line's start to their closing line's end."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks = []
    opened: re.Match[str] | None = None
    for match in _FENCE.finditer(text):
        line_end = text.find("\n", match.end())
        line_end = len(text) if line_end < 0 else line_end
        fence = match.group(1)
        if opened is None:
            if not (fence[0] == "`" and "`" in text[match.end():line_end]):  # ``` `x` is inline code, no fence
                opened = match
        elif fence[0] == opened.group(1)[0] and len(fence) >= len(opened.group(1)) \
                and not text[match.end():line_end].strip():
            blocks.append((opened.start(), line_end))
            opened = None
    return blocks


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start() + start, m.end() + start) for m in _INLINE.finditer(text[start:end])]
