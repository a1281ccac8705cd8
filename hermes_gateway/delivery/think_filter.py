"""Incremental removal of ``<think>``-style blocks from streamed text.

Models emit reasoning inside ``<think>…</think>`` (or ``<thinking>``,
``<reasoning>``), and a tag can be split across chunks (``"<thi"`` +
``"nk>"``). The scrubber therefore holds back any tail that could still
become a tag, and releases it as soon as it cannot.
"""

from __future__ import annotations

TAG_NAMES = ("think", "thinking", "reasoning")
_OPEN = tuple(f"<{n}>" for n in TAG_NAMES)
_CLOSE = tuple(f"</{n}>" for n in TAG_NAMES)
_LONGEST = max(len(t) for t in _OPEN + _CLOSE)


class ThinkScrubber:
    """Feed raw chunks, get back only the text a person may see.

    ``feed`` returns the newly visible text (possibly empty); ``flush``
    returns what was held back at the end of the stream. An unclosed think
    block hides everything after its opening tag, as the final
    post-processing does.
    """

    __slots__ = ("_pending", "_inside", "_eat_space")

    def __init__(self) -> None:
        self._pending = ""
        self._inside: str | None = None  # the closing tag we wait for, inside a block
        self._eat_space = False  # whitespace right after a block goes with it, as in the final text

    def feed(self, chunk: str) -> str:
        if not self._pending and not self._inside and not self._eat_space and "<" not in chunk:
            return chunk  # the hot path: plain text with no tag in sight
        text = self._pending + chunk
        self._pending = ""
        out: list[str] = []
        pos = 0
        while True:
            lt = text.find("<", pos)
            if lt < 0:
                if not self._inside:
                    self._emit(out, text[pos:])
                break
            if not self._inside:
                self._emit(out, text[pos:lt])
            tags = (self._inside,) if self._inside else _OPEN
            rest = text[lt:lt + _LONGEST].lower()
            matched = next((t for t in tags if rest.startswith(t)), None)
            if matched:
                self._eat_space = self._inside is not None  # leaving a block
                self._inside = None if self._inside else "</" + matched[1:]
                pos = lt + len(matched)
                continue
            if len(text) - lt < _LONGEST and any(t.startswith(rest) for t in tags):
                self._pending = text[lt:]  # may still become a tag: hold it back
                break
            if not self._inside:
                self._emit(out, "<")
            pos = lt + 1
        return "".join(out)

    def _emit(self, out: list[str], text: str) -> None:
        if self._eat_space and text:
            text = text.lstrip()
            self._eat_space = not text
        out.append(text)

    def flush(self) -> str:
        pending, self._pending = self._pending, ""
        if self._inside:
            return ""
        out: list[str] = []
        self._emit(out, pending)
        return "".join(out)


def strip_think(text: str) -> str:
    """Remove every think block from a complete text."""
    scrubber = ThinkScrubber()
    return scrubber.feed(text) + scrubber.flush()


