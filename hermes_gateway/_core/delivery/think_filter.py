"""Clean text for chat previews: the one reasoning filter, under the delivery core's name.

The rules (tags, a reply that opens inside reasoning, whitespace) live in
:mod:`hermes_gateway._core.reasoning`, shared with the terminal, the API's SSE
writers and the final post-processing.
"""

from __future__ import annotations

from ..reasoning import ReasoningFilter, postprocess_reply


class ThinkScrubber(ReasoningFilter):
    """A :class:`ReasoningFilter` whose ``flush`` returns only the visible rest."""

    __slots__ = ()

    def flush(self) -> str:
        return self.finish()[1]


def strip_think(text: str, *, starts_open: bool = False) -> str:
    """Remove every reasoning block from a complete text (the final post-processing)."""
    return postprocess_reply(text, starts_open=starts_open)


__all__ = ["ReasoningFilter", "ThinkScrubber", "strip_think"]
