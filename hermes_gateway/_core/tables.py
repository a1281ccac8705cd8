"""Markdown tables laid out for a chat screen: a monospace grid when it fits, else one "key: value" block per row.

Why: no chat platform renders a GitHub-style table (Telegram, Discord,
Slack's markdown and WhatsApp all show it as typed), and a page of pipes and
dashes on a phone is unreadable. Every platform plugin needs the same two
decisions (where are the tables, which layout fits the screen), so they live
here once; each plugin only writes the result in its own syntax
(:func:`rewrite_tables` for the Markdown-like ones, or :func:`layout_table`
for a converter that writes entities, like Telegram's).

A grid is chosen when its widest line fits ``width`` columns (a wide East
Asian character counts two, as a monospace font draws it); otherwise each
row becomes a block of ``header: value`` lines, blocks separated by a blank
line. In a grid, cells show their plain text (markup inside a monospace
block would show as typed); in records, values keep their inline Markdown.

A laid-out table can be longer than its Markdown (padding, repeated
headers): :func:`has_table` lets the delivery core measure such a text as
rendered instead of trusting that rendering only removes markers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

#: About what a phone shows of a monospace line in a chat bubble (portrait, default font).
DEFAULT_WIDTH = 40
GAP = "  "
RULE = "─"

Style = Literal["markdown", "whatsapp", "plain"]

_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_DELIMITER_ANYWHERE = re.compile(_DELIMITER.pattern, re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"^ {0,3}(#{1,6}(\s|$)|>|`{3,}|~{3,}|[-*+]\s|\d{1,9}[.)]\s)")  # ends a table (GFM)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKERS = re.compile(r"(\*\*|__|~~|`)")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])|(?<!\w)_(?!\s)([^_\n]+?)(?<!\s)_(?!\w)")


@dataclass(frozen=True, slots=True)
class TableBlock:
    """One table found in a Markdown text: ``text[start:end]`` (whole lines, no final newline)."""

    start: int
    end: int
    header: list[str]
    rows: list[list[str]]
    aligns: list[str] = field(default_factory=list)   # per column: "left", "right" or "center" (the delimiter's colons)


@dataclass(frozen=True, slots=True)
class TableLayout:
    """How a table reads on a chat screen.

    ``grid``: the monospace lines (header, rule, rows), or None when the
    grid is wider than the screen; then ``records`` holds one list of
    ``(key, value)`` pairs per row (empty cells left out).
    """

    grid: list[str] | None
    records: list[list[tuple[str, str]]]


def has_table(text: str) -> bool:
    """True when ``text`` may hold a table (a delimiter row under a line with a pipe): cheap, for every preview."""
    if "|" not in text or "-" not in text:
        return False
    for match in _DELIMITER_ANYWHERE.finditer(text):
        line = match.group()
        if "|" in line or "|" in _line_before(text, match.start()):
            return True
    return False


def _line_before(text: str, start: int) -> str:
    if start == 0:
        return ""
    begin = text.rfind("\n", 0, start - 1) + 1
    return text[begin:start - 1]


def split_row(line: str) -> list[str]:
    """The cells of one table row, trimmed; ``\\|`` stays a pipe inside a cell, pipes inside `code` too."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells: list[str] = []
    current: list[str] = []
    code = False
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            current.append("|")
            i += 2
            continue
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    cells.append("".join(current).strip())
    return cells


def find_tables(markdown: str) -> list[TableBlock]:
    """The GFM tables of ``markdown`` outside code fences: a header row, a delimiter row, then rows with a pipe.

    The header and the delimiter must have the same number of cells (GFM's
    rule); the rows end at a blank line or a line that starts another block. Rows are
    padded or cut to the header's width, as GFM renders them.
    """
    if not has_table(markdown):
        return []
    lines = markdown.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    tables: list[TableBlock] = []
    fence: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip()[len(opened.group(1)):].strip():
                fence = None
            index += 1
            continue
        if opened:
            fence = opened.group(1)
            index += 1
            continue
        if index + 1 < len(lines) and "|" in line and _DELIMITER.match(lines[index + 1]) \
                and not line.startswith(("    ", "\t")):
            header = split_row(line)
            if len(header) == len(split_row(lines[index + 1])):
                rows: list[list[str]] = []
                last = index + 1
                while last + 1 < len(lines) and lines[last + 1].strip() and not _BLOCK_START.match(lines[last + 1]):
                    cells = split_row(lines[last + 1])
                    rows.append((cells + [""] * len(header))[:len(header)])
                    last += 1
                aligns = [_align(cell) for cell in split_row(lines[index + 1])]
                tables.append(TableBlock(starts[index], starts[last] + len(lines[last]), header, rows, aligns))
                index = last + 1
                continue
        index += 1
    return tables


def _align(delimiter: str) -> str:
    """A delimiter cell's alignment: ``:--`` or ``---`` left, ``--:`` right, ``:-:`` center."""
    if delimiter.endswith(":"):
        return "center" if delimiter.startswith(":") else "right"
    return "left"


def plain_cell(cell: str) -> str:
    """A cell's Markdown as the text a person reads: links to their text, emphasis and code markers gone."""
    text = _LINK.sub(lambda m: m.group(1), cell)
    text = _MARKERS.sub("", text)
    return _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: wide and full-width characters two, combining marks none."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or ch in "\u200b\u200d\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def grid_lines(header: list[str], rows: list[list[str]], aligns: list[str] | None = None) -> list[str]:
    """The table as aligned monospace lines: header, a rule, rows; columns two spaces apart, no trailing spaces.

    ``aligns`` (per column, from the delimiter row): a ``right`` column is
    padded on the left (numbers line up), a ``center`` one on both sides.
    """
    widths = [max([display_width(header[c])] + [display_width(r[c]) for r in rows]) for c in range(len(header))]
    aligns = aligns or []

    def pad(cell: str, column: int) -> str:
        room = widths[column] - display_width(cell)
        align = aligns[column] if column < len(aligns) else "left"
        if align == "right":
            return " " * room + cell
        if align == "center":
            return " " * (room // 2) + cell + " " * (room - room // 2)
        return cell + " " * room

    def line(cells: list[str]) -> str:
        return GAP.join(pad(cell, c) for c, cell in enumerate(cells)).rstrip()

    rule = GAP.join(RULE * w for w in widths)
    return [line(header), rule] + [line(r) for r in rows]


def layout_table(header: list[str], rows: list[list[str]], *, width: int = DEFAULT_WIDTH,
                 plain: list[str] | None = None, plain_rows: list[list[str]] | None = None,
                 aligns: list[str] | None = None) -> TableLayout:
    """The layout for a table whose cells are ``header`` and ``rows`` (see :class:`TableLayout`).

    ``plain``/``plain_rows``: the cells' visible text when the caller has
    it already (a converter that parsed them); else :func:`plain_cell`.
    ``aligns``: each column's ``left``/``right``/``center`` (see :func:`grid_lines`).
    """
    plain_header = plain if plain is not None else [plain_cell(c) for c in header]
    plain_body = plain_rows if plain_rows is not None else [[plain_cell(c) for c in r] for r in rows]
    grid = grid_lines(plain_header, plain_body, aligns)
    if not rows or max(display_width(line) for line in grid) <= width:  # no rows: the header alone, as a grid
        return TableLayout(grid, [])
    records = [[(header[c] or f"{c + 1}", row[c]) for c in range(len(header)) if row[c]] for row in rows]
    return TableLayout(None, records)


def render_table(header: list[str], rows: list[list[str]], *, width: int = DEFAULT_WIDTH,
                 style: Style = "markdown", aligns: list[str] | None = None) -> str:
    """One table as text a platform renders readably.

    ``markdown`` (Discord, Slack's markdown): a grid in a code fence, or
    ``**key**: value`` lines. ``whatsapp``: a grid between triple
    backticks (WhatsApp's monospace), or ``*key*: value``. ``plain``: the
    grid as is, or ``key: value``.
    """
    layout = layout_table(header, rows, width=width, aligns=aligns)
    if layout.grid is not None:
        body = "\n".join(layout.grid)
        if style == "markdown":
            return f"```\n{body}\n```"
        if style == "whatsapp":
            return f"```{body}```"
        return body
    bold = {"markdown": "**", "whatsapp": "*", "plain": ""}[style]
    blocks = []
    for record in layout.records:
        keys = [plain_cell(key) for key, _ in record]
        blocks.append("\n".join(f"{bold}{key}{bold}: {value}" if key else value
                                for key, (_, value) in zip(keys, record)))
    return "\n\n".join(block for block in blocks if block)


def rewrite_tables(markdown: str, *, width: int = DEFAULT_WIDTH, style: Style = "markdown") -> str:
    """``markdown`` with every table replaced by :func:`render_table`; the rest untouched."""
    tables = find_tables(markdown)
    if not tables:
        return markdown
    out: list[str] = []
    at = 0
    for table in tables:
        out.append(markdown[at:table.start])
        out.append(render_table(table.header, table.rows, width=width, style=style, aligns=table.aligns))
        at = table.end
    out.append(markdown[at:])
    return "".join(out)
