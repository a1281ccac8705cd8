"""Message length in the platform's own unit.

Telegram counts UTF-16 code units (an emoji outside the BMP counts 2);
Matrix counts UTF-8 bytes (an event's size); most others count characters. Getting this wrong means a 400 on the last
chunk of a long reply, so every limit check goes through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..length import utf8_length, utf8_width, utf16_length  # public too (hermes_gateway.utf16_length ...)
from ..tables import has_table

if TYPE_CHECKING:
    from ..platform import Platform

Measure = Callable[[str], int]


def measure_for(unit: str) -> Measure:
    return utf16_length if unit == "utf16" else utf8_length if unit == "bytes" else len


class RenderedMeasure:
    """A message's length as the platform counts it once its plugin has rendered it (``Platform.rendered_length``).

    The platform promises the rendered length never exceeds the length in
    its ``length_unit`` (a converter that only removes markup), except for a
    text with a Markdown table (laid out as a padded grid or as key: value
    lines, see :mod:`hermes_gateway._core.tables`): such a text is always
    rendered to be measured. So a text without a table well within the
    limit in plain units is measured in plain units (no rendering on the
    hot path), and only a text near or past the limit is rendered and
    measured: that is what lets a message hold up to the limit
    of what the platform counts, not of its Markdown. The last few results
    are remembered: the core measures the same preview more than once.
    """

    __slots__ = ("unit", "rendered", "threshold", "_memo")

    #: Texts this far under the limit (in plain units) are not rendered to be measured.
    SLACK = 256

    def __init__(self, unit: Measure, rendered: Callable[[str], int], limit: int) -> None:
        self.unit = unit
        self.rendered = rendered
        self.threshold = max(limit - self.SLACK, 0)
        self._memo: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        plain = self.unit(text)
        grows = has_table(text)
        if plain <= self.threshold and not grows:
            return plain
        found = self._memo.get(text)
        if found is None:
            found = self.rendered(text) if grows else min(plain, self.rendered(text))
            if len(self._memo) >= 8:
                self._memo.pop(next(iter(self._memo)))
            self._memo[text] = found
        return found


def measure_for_platform(platform: "Platform") -> Measure:
    """The measure the core uses for ``platform``'s messages: its unit, or what it counts once rendered."""
    unit = measure_for(platform.length_unit)
    if platform.rendered_length is None:
        return unit
    return RenderedMeasure(unit, platform.rendered_length, platform.max_message_length)


def longest_prefix_within(text: str, budget: int, measure: Measure) -> int:
    """The largest ``n`` with ``measure(text[:n]) <= budget``."""
    if budget <= 0:
        return 0
    if measure is len or text.isascii():
        return min(len(text), budget)
    used = 0
    if getattr(measure, "unit", measure) is utf8_length:  # bytes: whole characters only, never half of one
        for i, ch in enumerate(text):
            used += utf8_width(ch)
            if used > budget:
                return i
        return len(text)
    for i, ch in enumerate(text):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > budget:
            return i
    return len(text)
