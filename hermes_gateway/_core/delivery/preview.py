"""The reply's visible text as it grows, and which preview each message should show.

:class:`Draft` takes the model's deltas (think blocks scrubbed, leading
whitespace dropped), freezes text past the platform's limit into finished
messages, and plans the next preview:

* a frozen message (its text will not grow) is shown with its final text,
  through ``on_stream_end``, before anything else;
* the live message shows its text, the tool progress line and the cursor;
* on an ``append_only`` platform a preview is an exact prefix of that
  message's final text: no cursor, no tool line, no closing fence added for
  the preview, no trailing whitespace; and a message freezes no earlier
  than what it already shows, so nothing shown is ever taken back.
"""

from __future__ import annotations

import re
from typing import Callable

from ..platform import Platform, StreamSettings
from ..reasoning import ReasoningFilter
from .ledger import Ledger, LedgerEntry
from .measure import Measure
from .split import Piece, fence_after, render, split_keeping

#: Between a preview's text and its tool progress line.
STATUS_GAP = "\n\n"

#: Append-only previews hold back a last word up to this long (it may still grow).
WORD_HOLD = 64


class Draft:
    """The visible text of one reply and the previews it calls for."""

    __slots__ = ("ledger", "starts_open", "append_only", "limit", "measure", "cursor", "scrubber", "parts",
                 "_joined", "_joined_parts", "raw", "leading", "tokens", "version", "status", "was_reset", "keep", "cursor_allowed",
                 "__weakref__")

    def __init__(self, platform: Platform, settings: StreamSettings, ledger: Ledger, measure: Measure, *,
                 reasoning_starts_open: bool = False,
                 cursor_allowed: Callable[[str], bool] | None = None) -> None:
        self.ledger = ledger
        self.starts_open = reasoning_starts_open  # model.reasoning_starts_open: replies open inside reasoning
        self.append_only = platform.append_only
        self.limit = platform.max_message_length
        self.keep = platform.keep_whole
        self.measure = measure
        self.cursor = "" if self.append_only else settings.cursor
        #: with crash recovery on: whether a message (by id) may show the cursor yet (recorded in the store)
        self.cursor_allowed = cursor_allowed
        self.scrubber = self._new_filter()
        self.parts: list[str] = []
        self._joined = ""
        self._joined_parts = 0
        self.raw: list[str] = []
        self.leading = True             # still skipping leading whitespace
        self.tokens = 0                 # visible deltas so far
        self.version = 0                # bumps on every visible change
        self.status = ""                # tool progress line, previews only
        self.was_reset = False

    # ------------------------------------------------------------------ the text
    # (``StreamSession.feed`` appends to ``raw``/``parts`` itself: it runs once per model token)

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            if not self.append_only:  # an append-only message cannot show a line it later drops
                self.version += 1

    def reset(self) -> None:
        """The text so far is being replaced (an upstream retry): previews stop, the final reconciles."""
        self.parts.clear()
        self._joined, self._joined_parts = "", 0
        self.raw.clear()
        self.scrubber = self._new_filter()
        self.leading = True
        self.was_reset = True
        self.version += 1

    def _new_filter(self) -> ReasoningFilter:
        # (the filter holds the bound method weakly: no draft -> filter -> draft cycle; see ReasoningFilter)
        return ReasoningFilter(starts_open=self.starts_open, on_retract=self._retract)

    def _retract(self) -> None:
        """A lone closing tag: the text shown so far was reasoning (see ``ReasoningFilter``). Drop it now."""
        self.parts.clear()
        self._joined, self._joined_parts = "", 0
        self.version += 1
        if any(entry.frozen for entry in self.ledger.entries) or (self.append_only and self.ledger.refs):
            # overflowed messages hold reasoning, or an appended message cannot take it back:
            # previews stop and the final text replaces them all
            self.was_reset = True

    @property
    def text(self) -> str:
        """The visible text fed so far (think blocks scrubbed)."""
        if len(self.parts) > self._joined_parts:  # join only what arrived since the last call
            self._joined += "".join(self.parts[self._joined_parts:])
            self._joined_parts = len(self.parts)
        return self._joined

    # ------------------------------------------------------------------ previews

    def plan(self) -> tuple[LedgerEntry | None, str]:
        """Freeze overflowing text, then pick the first message whose preview is out of date."""
        doc = self.text
        self.freeze_overflow(doc)
        pending = self._next_unended_frozen()
        if pending is not None:
            return pending, pending.text or ""
        live = self.ledger.live
        if live is None:
            start, opener = self.after_frozen(doc)
            live = LedgerEntry(Piece(start, len(doc), opener))
            self.ledger.entries.append(live)
        live.piece = Piece(live.piece.start, len(doc), live.piece.opener)
        if self.append_only:
            text = self._append_only_text(doc, live)
            if not text:
                return None, ""
            return (live, text) if live.needs(text) else (None, "")
        body = render(doc, live.piece, limit=self.limit - self.reserve(), measure=self.measure)
        status = STATUS_GAP + self.status if self.status and body else self.status
        if not body and not self.status:
            return None, ""
        text = body + status + self._cursor_on(live)
        live.pending_end = len(doc)
        return (live, text) if live.needs(text) else (None, "")

    def _cursor_on(self, live: LedgerEntry) -> str:
        """The cursor, where a crash could not leave it behind (see ``session.ReplyJournal``)."""
        allowed = self.cursor_allowed
        if allowed is None or not self.cursor:
            return self.cursor
        ref = live.ref
        return self.cursor if ref is not None and allowed(ref.message_id) else ""

    def _append_only_text(self, doc: str, live: LedgerEntry) -> str:
        """The live message's preview on an append-only platform: a prefix of its final text."""
        start, opener = live.piece.start, live.piece.opener
        end = len(doc)
        if end > start and not doc[end - 1].isspace():
            # the last word may still be growing: if this message is cut where its preview ends,
            # the cut must not split a word (a word longer than WORD_HOLD is shown as it comes)
            space = max(doc.rfind(" ", start, end), doc.rfind("\n", start, end))
            if space >= 0 and end - space <= WORD_HOLD:
                end = space
        while end > start and doc[end - 1].isspace():
            end -= 1
        if live.seen is not None and end < live.seen[0].end:
            end = live.seen[0].end  # never show less than before (whitespace only moved)
        if end <= start:
            return ""
        text = render(doc, Piece(start, end, opener), closed=False)
        live.pending_end = end
        return text

    def freeze_overflow(self, doc: str) -> None:
        live = self.ledger.live
        start, opener = (live.piece.start, live.piece.opener) if live else self.after_frozen(doc)
        keep = live.seen[0].end if self.append_only and live is not None and live.seen is not None else None
        pieces = split_keeping(doc, self.limit, self.measure, start=start, opener=opener,
                               reserve=self.reserve(), min_end=keep, keep=self.keep)
        if len(pieces) == 1:
            return
        if live is not None:
            self.ledger.entries.pop()
        for piece in pieces[:-1]:
            entry = live if live is not None else LedgerEntry(piece)
            live = None
            entry.piece, entry.frozen = piece, True
            entry.text = render(doc, piece, limit=self.limit, measure=self.measure)
            self.ledger.entries.append(entry)
        self.ledger.entries.append(LedgerEntry(pieces[-1]))

    def reserve(self) -> int:
        """Room a preview keeps free after the text: the cursor, and the tool progress line."""
        if self.append_only:
            return 0
        status = self.measure(STATUS_GAP + self.status) if self.status else 0
        return self.measure(self.cursor) + status

    def after_frozen(self, doc: str) -> tuple[int, str | None]:
        """Where the text after the frozen messages starts, and the code fence open there."""
        frozen = [e for e in self.ledger.entries if e.frozen]
        if not frozen:
            return 0, None
        last = frozen[-1].piece
        return last.end, fence_after(doc[last.start:last.end], last.opener)

    def _next_unended_frozen(self) -> LedgerEntry | None:
        for entry in self.ledger.entries:
            if not entry.frozen:
                return None
            if entry.needs_end(entry.text or ""):
                return entry
        return None


#: The tool progress line a preview may end with (:data:`STATUS_GAP` + "🔧 name…").
_STATUS_LINE = re.compile(r"(?:\n\n)?🔧 [^\n]*…\Z")


def clean_preview(text: str, cursor: str) -> str:
    """What a preview shows of the reply itself: without the cursor and the tool progress line (what crash
    recovery records and finishes)."""
    if cursor and text.endswith(cursor):
        text = text[: -len(cursor)]
    return _STATUS_LINE.sub("", text).rstrip()
