"""What the core believes each message of a reply shows.

Exactly-once delivery rests on this ledger: a message is sent only while
it has no ref, edited only when what it should show differs from what it
is believed to show, and re-edited at the end when an ambiguous failure
(a timeout that may have landed) left its content uncertain. A final text
whose *send* may have landed is never sent again (``maybe_sent``): the
message may be on screen under an id the core never learnt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..platform import MessageRef
from .measure import Measure
from .split import KeepWhole, Piece, fence_after, render, split_into_at_least, split_keeping, split_text

#: Shown in a message that must still exist but whose reply turned out empty.
EMPTY_REPLY = "(no reply)"


@dataclass
class LedgerEntry:
    """One message of the reply, in order."""

    piece: Piece
    frozen: bool = False          # its text will not grow any more (overflowed into the next)
    text: str | None = None       # once frozen: the text it must end up showing
    ref: MessageRef | None = None
    shown: str | None = None      # the text we believe the person sees; None = nothing or unknown
    uncertain: bool = False       # an ambiguous failure: what it shows is unknown
    ended: bool = False           # its last successful call was on_stream_end with ``shown``
    seen: tuple[Piece, str] | None = None          # the part of the reply it shows, and that text
    pending_end: int = 0          # where the text of the preview being planned ends in the reply
    last_call: float = float("-inf")
    maybe_sent: str | None = None  # a send of this final text may have landed (a timeout): never sent again

    def needs(self, text: str) -> bool:
        """Whether showing ``text`` here takes a call (never for identical, certain text)."""
        if self.ref is None and self.maybe_sent == text:
            return False  # it may be on screen under an id we never learnt: a second send could show it twice
        return self.ref is None or self.uncertain or self.shown != text

    def needs_end(self, text: str) -> bool:
        """Whether ending this message with ``text`` takes a call: every message ends with on_stream_end."""
        if self.ref is None and self.maybe_sent == text:
            return False
        return self.needs(text) or not self.ended


@dataclass
class Ledger:
    entries: list[LedgerEntry] = field(default_factory=list)

    @property
    def live(self) -> LedgerEntry | None:
        return self.entries[-1] if self.entries and not self.entries[-1].frozen else None

    @property
    def refs(self) -> list[MessageRef]:
        return [e.ref for e in self.entries if e.ref is not None]

    def plan_final(self, doc: str, shown_doc: str, limit: int, measure: Measure, *, reset: bool = False,
                   interrupted: bool = False, min_end: int | None = None,
                   keep: KeepWhole | None = None) -> list[tuple[LedgerEntry, str]]:
        """Which message must end up showing which text, for the final reply ``doc``.

        Messages already on screen are reused, in order, even when previews
        stopped after failures (the final edit is tried; only a message that
        cannot be edited is sent anew). Frozen messages keep their text when
        the final reply still starts with what they show; otherwise the reply
        is split again, into at least as many pieces as there are messages,
        so none is left showing stale text. An interrupted reply only
        finishes the messages that exist. ``min_end`` (append-only
        platforms) keeps the live message's text at least up to what it
        already shows. ``keep``: ``Platform.keep_whole``. The ledger becomes the plan.
        """
        entries = [e for e in self.entries if e.ref is not None or e.frozen]
        frozen = [e for e in entries if e.frozen]
        pieces: list[Piece]
        if not reset and frozen and doc.startswith(shown_doc[: frozen[-1].piece.end]):
            last = frozen[-1].piece
            opener = fence_after(doc[last.start:last.end], last.opener)
            tail = split_keeping(doc, limit, measure, start=last.end, opener=opener,
                                 min_end=min_end, keep=keep) if last.end < len(doc) else []
            pieces = [e.piece for e in frozen] + tail
        elif not reset and not frozen and doc:
            pieces = split_keeping(doc, limit, measure, min_end=min_end, keep=keep)
        else:
            pieces = split_text(doc, limit, measure, keep=keep) if doc else []
        if len(pieces) < len(entries):
            pieces = split_into_at_least(doc, len(entries), limit, measure, keep=keep) if doc else []
        plan: list[tuple[LedgerEntry, str]] = []
        for i, piece in enumerate(pieces):
            entry = entries[i] if i < len(entries) else LedgerEntry(piece)
            entry.piece, entry.frozen = piece, True
            plan.append((entry, render(doc, piece, limit=limit, measure=measure)))
        for entry in entries[len(pieces):]:  # more messages than text: none may keep a cursor
            plan.append((entry, EMPTY_REPLY))
        if interrupted:
            plan = [(e, t) for e, t in plan if e.ref is not None]
        self.entries = [entry for entry, _ in plan]
        return plan
