"""Word wrapping for text that arrives a few characters at a time.

A terminal wraps long lines wherever the width runs out, cutting words in
half ("offli" / "ne"). Prose reads better broken between words, so the
reply box wraps it here: a word that would not fit starts a new line. The
last word of a batch is held back until the next whitespace shows where it
ends (a word's worth of delay, never more than one batch in practice).

Lines inside a Markdown code fence are left alone: a newline added there
would change the code a person copies out of the terminal.
"""

from __future__ import annotations

import re
from typing import Callable

from prompt_toolkit.utils import get_cwidth

_PIECES = re.compile(r"\n|[^\S\n]+|\S+")


class StreamWrapper:
    """``feed`` text, get it back with line breaks where words would have been cut; ``flush`` at the end."""

    def __init__(self, width: Callable[[], int]) -> None:
        self._width = width
        self._held = ""          # a word that may not be complete yet
        self._column = 0         # display cells used on the current line
        self._line = ""          # the current line's text so far (to spot ``` fences)
        self._in_fence = False
        self._blank = ""         # spaces after the last word placed, not written yet

    def line_started_elsewhere(self) -> None:
        """Something other than the reply (a tool line) ended with a newline: we are at column 0."""
        self._column = 0
        self._line = ""
        self._blank = ""

    def feed(self, text: str) -> str:
        data = self._held + text
        self._held = ""
        pieces = _PIECES.findall(data)
        if pieces and not pieces[-1].isspace() and pieces[-1] != "\n":
            self._held = pieces.pop()  # wait for the space (or newline) that ends this word
            if get_cwidth(self._held) >= self._width():
                pieces.append(self._held)  # longer than a line anyway: no point waiting
                self._held = ""
        return "".join(self._place(piece) for piece in pieces)

    def end_word(self) -> str:
        """The text fed so far ends a word (whitespace follows, not fed yet): place the held word now."""
        held, self._held = self._held, ""
        return self._place(held) if held else ""

    def flush(self) -> str:
        held, self._held = self._held, ""
        out = self._place(held) if held else ""
        blank, self._blank = self._blank, ""
        return out + blank

    def _place(self, piece: str) -> str:
        width = max(10, self._width())
        if piece == "\n":
            if self._line.lstrip().startswith("```"):
                self._in_fence = not self._in_fence
            blank, self._blank = self._blank, ""
            self._column, self._line = 0, ""
            return blank + "\n"
        cells = get_cwidth(piece)
        if self._in_fence:
            self._line += piece
            self._column = (self._column + cells) % width
            return piece
        if piece.isspace():
            self._blank += piece  # written with the next word, or replaced by a line break
            return ""
        blank, self._blank = self._blank, ""
        out = ""
        if self._column > 0 and self._column + get_cwidth(blank) + cells > width:
            out, blank = "\n", ""
            self._column, self._line = 0, ""
        out += blank
        self._column += get_cwidth(blank)
        while cells > width:  # a "word" longer than a line (a URL): cut it where it must be cut
            cut = _fit(piece, width - self._column)
            out += piece[:cut] + "\n"
            piece = piece[cut:]
            cells = get_cwidth(piece)
            self._column, self._line = 0, ""
        self._line += blank + piece
        self._column += cells
        return out + piece


def _fit(word: str, cells: int) -> int:
    """How many characters of ``word`` fit in ``cells`` display cells (at least one)."""
    used = 0
    for i, char in enumerate(word):
        used += get_cwidth(char)
        if used > cells:
            return max(1, i)
    return len(word)
