"""Drop ``<think>``-style blocks from a stream of text deltas, one delta at a time.

The terminal shows text the moment it arrives, so it cannot wait for the
whole reply and strip think blocks afterwards the way ``TurnEnd.reply`` is
cleaned. A tag may also be split across deltas (``"<thi"`` + ``"nk>"``), so
the filter holds back only the few trailing characters that could still
become a tag, and releases everything else at once.
"""

from __future__ import annotations

#: Opening tag -> its closing tag. Lowercase; matching ignores case.
THINK_TAGS: dict[str, str] = {
    "<think>": "</think>",
    "<thinking>": "</thinking>",
    "<reasoning>": "</reasoning>",
}


class ThinkFilter:
    """Incremental scrubber: ``feed`` returns what may be shown now, ``finish`` the rest."""

    def __init__(self, tags: dict[str, str] | None = None) -> None:
        self._tags = {open_.lower(): close.lower() for open_, close in (tags or THINK_TAGS).items()}
        self._held = ""             # text that could still turn out to be (part of) a tag
        self._closing: str | None = None  # the closing tag we wait for while inside a block

    @property
    def inside_block(self) -> bool:
        """True while the model is "thinking": nothing it says is shown."""
        return self._closing is not None

    def feed(self, text: str) -> str:
        data = self._held + text
        self._held = ""
        shown: list[str] = []
        while data:
            lowered = data.lower()
            if self._closing is None:
                start, tag = _earliest(lowered, self._tags)
                if tag is not None:
                    shown.append(data[:start])
                    self._closing = self._tags[tag]
                    data = data[start + len(tag):]
                    continue
                keep = _partial_suffix(lowered, self._tags)
                shown.append(data[:len(data) - keep])
                self._held = data[len(data) - keep:]
                break
            end = lowered.find(self._closing)
            if end >= 0:
                data = data[end + len(self._closing):]
                self._closing = None
                continue
            keep = _partial_suffix(lowered, (self._closing,))
            self._held = data[len(data) - keep:]
            break
        return "".join(shown)

    def finish(self) -> str:
        """The stream ended: a held-back ``<thi`` was plain text after all; an unclosed block stays hidden."""
        held, self._held = self._held, ""
        if self._closing is not None:
            return ""
        return held


def _earliest(lowered: str, tags: dict[str, str]) -> tuple[int, str | None]:
    best, best_tag = -1, None
    for tag in tags:
        at = lowered.find(tag)
        if at >= 0 and (best < 0 or at < best):
            best, best_tag = at, tag
    return best, best_tag


def _partial_suffix(lowered: str, tags) -> int:
    """Length of the longest suffix of ``lowered`` that is a proper prefix of one of ``tags``."""
    longest = 0
    for tag in tags:
        for size in range(min(len(tag) - 1, len(lowered)), longest, -1):
            if lowered.endswith(tag[:size]):
                longest = size
                break
    return longest
