"""The few helpers of the core that a platform plugin legitimately needs, as stable public functions.

They are re-exported by :mod:`hermes_gateway`; the modules behind them
(the delivery core's splitter, the log scrubber) stay private and free to
change.
"""

from __future__ import annotations

from typing import Callable, Iterable

from .length import utf8_length, utf16_length
from .secrets import protect, protect_shape, scrub

__all__ = ["protect_secret", "protect_secret_shape", "scrub_secrets", "split_markdown", "utf8_length",
           "utf16_length"]


def split_markdown(text: str, limit: int, *, measure: Callable[[str], int] = len,
                   keep_whole: Callable[[str], Iterable[tuple[int, int]]] | None = None) -> list[str]:
    """``text`` cut into messages of at most ``limit`` (as ``measure`` counts), the way the core splits a reply.

    Cuts at a paragraph, line, sentence or word; a code fence cut in two is
    closed and reopened; ``keep_whole`` (as on ``Platform``) names ranges
    that must not be cut. For a plugin whose server refuses a text the core
    thought would fit (a lower limit than the platform's own).
    """
    from .delivery.split import render, split_text  # the delivery core loads only when a plugin splits

    pieces = split_text(text, limit, measure, keep=keep_whole)
    return [render(text, piece, limit=limit, measure=measure) for piece in pieces]


def protect_secret(*values: str | None, mask: str = "<secret>") -> None:
    """Never show these values: every log record and :func:`scrub_secrets` output shows ``mask`` instead.

    Settings fields marked :func:`hermes_gateway.secret` are registered by the
    core already (as ``<secret>``); this is for secrets a plugin learns while
    running, or to name what was masked (``mask="<discord-token>"``).
    Values shorter than 8 characters are ignored (they would mask ordinary words).
    """
    protect(*values, mask=mask)


def protect_secret_shape(pattern: str, mask: str = "<secret>") -> None:
    """Mask anything matching the regular expression ``pattern`` (Slack's ``xox…`` tokens), known or not."""
    protect_shape(pattern, mask=mask)


def scrub_secrets(text: str) -> str:
    """``text`` with every registered secret masked (and credentials inside URLs): for error messages."""
    return scrub(text)
