"""Splitting a long reply into messages that fit, at good boundaries.

A cut prefers, in order: a paragraph break, a line break, the end of a
sentence, a space; only a word longer than a whole message is cut hard.
A cut inside a code fence closes the fence at the end of one message and
reopens it (same info string) at the start of the next, so every message
renders on its own. The pieces are *positions* in the document, so a
streaming session can freeze the first messages while the rest still grows.

A platform that renders the text (Markdown into formatting) can name the
ranges a cut must not fall inside (``Platform.keep_whole``: a bold phrase, a
link, a code block): a cut then goes before such a range, which moves whole
into the next message. A range too long for one message is no constraint
(a code block longer than a message is cut inside, its fence reopened).

A Markdown table cut between its rows is treated like a fence: the next
message repeats the table's header and delimiter lines (:func:`table_head`),
so each message holds a whole table a platform can lay out.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable

from ..tables import find_tables, has_table
from .measure import Measure, RenderedMeasure, longest_prefix_within

#: ``Platform.keep_whole``: (start, end) ranges of a message's text a cut must not fall inside.
KeepWhole = Callable[[str], Iterable[tuple[int, int]]]

FENCE = "```"
CLOSER = FENCE
_CLOSER_RESERVE = len("\n" + FENCE)
_HEAD_RESERVE = 16  # a reopened fence's info string, roughly: a kept range must fit a message that opens with one
MAX_TABLE_HEAD = 512  # a longer table head is not repeated: it would crowd out the rows (and a small message)
_BOUNDARIES = ("\n\n", "\n", ". ", "! ", "? ", "。", " ")


@dataclass(frozen=True, slots=True)
class Piece:
    """Message text ``doc[start:end]``, opened inside the fence ``opener`` (or None)."""

    start: int
    end: int
    opener: str | None


def fence_after(text: str, opener: str | None) -> str | None:
    """The fence open at the end of ``text`` when ``opener`` was open at its start."""
    if FENCE not in text:
        return opener
    line_start = 0
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith(FENCE):
            opener = None if opener is not None else stripped.rstrip()
        line_start += len(line) + 1
    return opener


def render(doc: str, piece: Piece, *, closed: bool = True, limit: int | None = None,
           measure: Measure | None = None) -> str:
    """The message text for ``piece``: reopened fence + body + closing fence if still open.

    With a ``limit``, a piece that only overflows because of a long run of
    whitespace at its edges (see :func:`choose_cut`) loses that whitespace:
    a person cannot see it, and a platform refuses an over-long message.
    """
    body = doc[piece.start:piece.end]
    head = table_head(doc, piece.start) if piece.opener is None else ""
    text = head + _render(body, piece.opener, closed)
    if limit is not None and measure is not None and measure(text) > limit:
        for trimmed in (body.lstrip(), body.strip()):
            text = head + _render(trimmed, piece.opener, closed)
            if measure(text) <= limit:
                break
    return text


_tables_seen: list[tuple[str, list[tuple[int, int, int]]]] = []


def _table_bodies(doc: str) -> list[tuple[int, int, int]]:
    """``(start, body_start, end)`` of each table in ``doc``; the last document's answer is remembered."""
    if _tables_seen and _tables_seen[0][0] is doc:
        return _tables_seen[0][1]
    bodies = []
    for table in find_tables(doc):
        header_end = doc.index("\n", table.start)
        delimiter_end = doc.find("\n", header_end + 1)
        if delimiter_end >= 0:
            bodies.append((table.start, delimiter_end + 1, table.end))
    _tables_seen[:] = [(doc, bodies)]
    return bodies


def table_head(doc: str, start: int) -> str:
    """The header and delimiter lines of the Markdown table whose rows ``doc[start:]`` continues, else "".

    A message that begins inside a table's rows repeats the table's head,
    so it is a table of its own (a renderer lays it out with its column
    names, as a code fence is reopened), never a run of bare pipes. The
    answer depends on the text alone (every part of the core renders a
    piece alike), so a head longer than :data:`MAX_TABLE_HEAD` is never
    repeated: on a platform whose messages are shorter than a head plus
    a row (none of the real ones: 2,000 and more) a table's rows could
    not be shown whole anyway.
    """
    if start == 0 or "|" not in doc or not has_table(doc):
        return ""
    for table_start, body_start, end in _table_bodies(doc):
        if body_start <= start < end:
            head = doc[table_start:body_start]
            return head if len(head) <= MAX_TABLE_HEAD else ""
    return ""


def _render(body: str, opener: str | None, closed: bool) -> str:
    head = f"{opener}\n" if opener else ""
    if closed and fence_after(body, opener) is not None:
        return head + body + (CLOSER if body.endswith("\n") else "\n" + CLOSER)
    return head + body


class Whole:
    """The ranges of ``doc`` no cut may fall inside, as sorted disjoint intervals (see :data:`KeepWhole`)."""

    __slots__ = ("starts", "ends")

    def __init__(self, intervals: list[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for lo, hi in sorted(intervals):
            if merged and lo < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.starts = [lo for lo, _ in merged]
        self.ends = [hi for _, hi in merged]

    @classmethod
    def find(cls, keep: KeepWhole, doc: str, start: int, opener: str | None, room: int,
             measure: Measure) -> "Whole":
        """Ask ``keep`` about ``doc[start:]`` (as its message would begin); ranges longer than ``room`` are dropped."""
        head = f"{opener}\n" if opener else ""
        shift = start - len(head)
        found = []
        for lo, hi in keep(head + doc[start:]):
            lo, hi = max(lo + shift, start), min(hi + shift, len(doc))
            if hi - lo > 1 and measure(doc[lo:hi]) <= room:
                found.append((lo, hi))
        return cls(found)

    def inside(self, at: int) -> int | None:
        """The start of the range ``at`` falls strictly inside, or None."""
        i = bisect_right(self.starts, at) - 1
        return self.starts[i] if i >= 0 and at < self.ends[i] and at > self.starts[i] else None


def _rfind_outside(doc: str, boundary: str, lo: int, hi: int, whole: Whole | None) -> int:
    """The last ``boundary`` in ``doc[lo:hi]`` whose end is not inside a kept range (-1: none)."""
    while True:
        at = doc.rfind(boundary, lo, hi)
        if at < 0 or whole is None:
            return at
        inside = whole.inside(at + len(boundary))
        if inside is None:
            return at
        hi = inside  # the boundary must end at or before the range's start


def choose_cut(doc: str, start: int, opener: str | None, limit: int, measure: Measure,
               whole: Whole | None = None) -> int:
    """Where to end a message that starts at ``start`` so its rendered text fits ``limit``.

    With ``whole`` (ranges to keep whole), a boundary outside them is
    preferred, even one early in the message, to a cut inside one.
    """
    head = measure(f"{opener}\n") if opener else measure(table_head(doc, start))
    room = limit - head - _CLOSER_RESERVE
    fit = longest_prefix_within(doc[start:], max(room, 1), measure)
    if fit <= 0:
        fit = 1
    if isinstance(measure, RenderedMeasure):
        grown = _grow(doc, start, opener, fit, limit, measure)
        if grown > fit:
            cut = _choose(doc, start, opener, limit, measure, whole, grown)
            if measure(render(doc, Piece(start, cut, opener))) <= limit:
                return cut
        cut = _choose(doc, start, opener, limit, measure, whole, fit)
        if cut > start + 1 and measure(render(doc, Piece(start, cut, opener))) > limit:
            return _choose(doc, start, opener, limit, measure, whole, _shrink(doc, start, opener, cut - start, limit,
                                                                               measure))
        return cut
    return _choose(doc, start, opener, limit, measure, whole, fit)


def _shrink(doc: str, start: int, opener: str | None, fit: int, limit: int, measure: RenderedMeasure) -> int:
    """The longest prefix shorter than ``fit`` that fits once rendered, to within a line.

    Only a table renders longer than its Markdown (a padded grid, repeated
    headers as keys), so a prefix that fits in plain units may not. A
    binary search on the rendered length, then the cut snaps back to the
    line start before it (a table's row, a record's block), which the
    caller's boundary search then prefers anyway.
    """
    lo, hi = 1, fit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if measure(render(doc, Piece(start, start + mid, opener))) <= limit:
            lo = mid
        else:
            hi = mid
    return lo


def _grow(doc: str, start: int, opener: str | None, fit: int, limit: int, measure: RenderedMeasure) -> int:
    """How much more than ``fit`` characters fit once rendered: a binary search, to ~64 characters.

    A prefix cut at an arbitrary character can render a little longer (an
    unclosed link shows as typed), so the result is a window for the cut,
    which is checked again once chosen.
    """
    rest = len(doc) - start
    lo, step = fit, limit
    while True:  # gallop: markup can make the Markdown several times longer than what is counted
        hi = min(rest, lo + step)
        if hi <= lo:
            return lo
        if measure(render(doc, Piece(start, start + hi, opener))) > limit:
            break
        lo, step = hi, step * 2
    while hi - lo > 64:
        mid = (lo + hi) // 2
        if measure(render(doc, Piece(start, start + mid, opener))) <= limit:
            lo = mid
        else:
            hi = mid
    return lo


def _choose(doc: str, start: int, opener: str | None, limit: int, measure: Measure, whole: Whole | None,
            fit: int) -> int:
    """The best cut within the first ``fit`` characters after ``start``."""
    window = doc[start:start + fit]
    if not window.strip():
        # a message of nothing but whitespace would be refused: carry the run into the next text
        end = start + len(doc[start:]) - len(doc[start:].lstrip())
        return choose_cut(doc, end, opener, limit, measure, whole) if end < len(doc) else len(doc)
    floor = fit // 3
    if whole is None or not whole.starts:
        for boundary in _BOUNDARIES:
            at = window.rfind(boundary, floor)
            if at >= 0:
                return start + at + len(boundary)
        return start + fit
    end = start + fit
    for lowest in (start + floor, start + 1):
        for boundary in _BOUNDARIES:
            at = _rfind_outside(doc, boundary, lowest, end, whole)
            if at >= 0:
                return at + len(boundary)
    inside = whole.inside(end)
    return inside if inside is not None and inside > start else end


def split_text(doc: str, limit: int, measure: Measure, *, start: int = 0, opener: str | None = None,
               reserve: int = 0, keep: KeepWhole | None = None) -> list[Piece]:
    """Cut ``doc[start:]`` into pieces whose rendered text (plus ``reserve``) fits ``limit``.

    ``keep`` (``Platform.keep_whole``) is asked once, and only when a cut is needed.
    """
    pieces: list[Piece] = []
    kept: Whole | None = None
    while True:
        rest = Piece(start, len(doc), opener)
        if measure(render(doc, rest)) + reserve <= limit:
            pieces.append(rest)
            return pieces
        if keep is not None and kept is None:
            kept = Whole.find(keep, doc, start, opener, limit - reserve - _CLOSER_RESERVE - _HEAD_RESERVE, measure)
        cut = choose_cut(doc, start, opener, limit - reserve, measure, kept)
        piece = Piece(start, cut, opener)
        pieces.append(piece)
        if cut >= len(doc):
            return pieces  # the rest fits once its edge whitespace is dropped (render with a limit)
        opener = fence_after(doc[start:cut], opener)
        start = cut


def split_keeping(doc: str, limit: int, measure: Measure, *, start: int = 0, opener: str | None = None,
                  reserve: int = 0, min_end: int | None = None, keep: KeepWhole | None = None) -> list[Piece]:
    """Like :func:`split_text`, but the first piece ends no earlier than ``min_end``.

    An append-only platform cannot take text back: a message that already
    shows ``doc[start:min_end]`` keeps at least that, so the cut moves to
    ``min_end`` when a better boundary lies before it.
    """
    pieces = split_text(doc, limit, measure, start=start, opener=opener, reserve=reserve, keep=keep)
    if min_end is None or not pieces or pieces[0].end >= min_end or min_end > len(doc) or min_end <= start:
        return pieces
    first = Piece(start, min_end, opener)
    if min_end >= len(doc):
        return [first]
    return [first] + split_text(doc, limit, measure, start=min_end, opener=fence_after(doc[start:min_end], opener),
                                reserve=reserve, keep=keep)


def split_into_at_least(doc: str, count: int, limit: int, measure: Measure, *,
                        keep: KeepWhole | None = None) -> list[Piece]:
    """Like :func:`split_text`, but at least ``count`` pieces when the text allows.

    Used when a replacement reply is shorter than what was already shown in
    several messages: every existing message must still show a part of it.
    """
    pieces = split_text(doc, limit, measure, keep=keep)
    while len(pieces) < count:
        biggest = max(range(len(pieces)), key=lambda i: pieces[i].end - pieces[i].start)
        p = pieces[biggest]
        if p.end - p.start < 2:
            break
        half = p.start + (p.end - p.start) // 2
        space = doc.rfind(" ", p.start + 1, half + 1)
        cut = space + 1 if space > p.start else half
        pieces[biggest:biggest + 1] = [Piece(p.start, cut, p.opener),
                                       Piece(cut, p.end, fence_after(doc[p.start:cut], p.opener))]
    return pieces


def reassemble(messages: list[str], sep: str = "") -> str:
    """Undo the fence close/reopen of :func:`render` across consecutive messages.

    Tests use it to compare a chat screen with the reply. It is exact when
    cuts inside a fence fall at line ends (the splitter prefers them; only
    a code line longer than a whole message forces a mid-line cut) and no
    message ends on a genuine closing fence followed by a message opening
    a fence with the same info string. A table's head repeated at the top
    of a message that continues its rows is dropped too. ``sep`` joins the
    messages (a space for platforms that trim the whitespace at a cut).
    """
    out: list[str] = []
    opener: str | None = None
    for i, text in enumerate(messages):
        if opener is not None and text.startswith(opener + "\n"):
            text = text[len(opener) + 1:]
        elif i and opener is None:
            so_far = sep.join(out)
            head = table_head(so_far + sep + text, len(so_far) + len(sep))  # the repeated head reads as rows
            if head and text.startswith(head):
                text = text[len(head):]  # a table's head repeated at the top of a message that continues it
        carried = opener
        opener = None
        if text.endswith("\n" + CLOSER) and i + 1 < len(messages):
            body = text[: -len(CLOSER)]
            still_open = fence_after(body, carried)
            if still_open is not None and messages[i + 1].startswith(still_open + "\n"):
                text, opener = body, still_open
        out.append(text)
    return sep.join(out)
