"""What the core believes each message of a reply shows.

Exactly-once delivery rests on this ledger: a message is sent only while
it has no ref, edited only when what it should show differs from what it
is believed to show, and re-edited at the end when an ambiguous failure
(a timeout that may have landed) left its content uncertain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..platform import MessageRef
from .split import Piece


@dataclass
class LedgerEntry:
    """One message of the reply, in order."""

    piece: Piece
    frozen: bool = False          # its text will not grow any more (overflowed into the next)
    text: str | None = None       # once frozen: the text it must end up showing
    ref: MessageRef | None = None
    shown: str | None = None      # the text we believe the person sees; None = nothing or unknown
    uncertain: bool = False       # an ambiguous failure: what it shows is unknown
    last_call: float = float("-inf")

    def needs(self, text: str) -> bool:
        """Whether showing ``text`` here takes a call (never for identical, certain text)."""
        return self.ref is None or self.uncertain or self.shown != text


@dataclass
class Ledger:
    entries: list[LedgerEntry] = field(default_factory=list)

    @property
    def live(self) -> LedgerEntry | None:
        return self.entries[-1] if self.entries and not self.entries[-1].frozen else None

    @property
    def refs(self) -> list[MessageRef]:
        return [e.ref for e in self.entries if e.ref is not None]

