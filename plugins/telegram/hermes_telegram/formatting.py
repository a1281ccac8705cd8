"""Markdown into Telegram's plain text + ``entities``, for every preview and the final text.

Why entities and never ``parse_mode``: a reply streamed word by word is full
of half-written markup, and Telegram refuses a whole MarkdownV2 message over
one unbalanced ``*``. Text plus entities cannot fail to parse; markup that
has not closed yet (``**bold and``) simply stays as typed until it closes.

Why a converter of our own on markdown-it-py (a CommonMark parser) rather
than telegramify-markdown: see ``plugins/telegram/bench/bench_telegram_formatting.py``
(it decorates headings with emoji, so its text can be longer than the
Markdown; ours never is). The core splits the Markdown; this module tells it
what Telegram will count of a message (``Platform.rendered_length``, which
must never exceed the Markdown's own length) and which ranges a cut must
not fall inside (:func:`keep_whole`).

Supported: bold, italic, strikethrough, inline code, fenced and indented
code blocks (``pre`` with the language), links (``text_link``), bullet and
numbered lists, block quotes, headings (bold), horizontal rules, and tables
(a ``pre`` grid when it fits :data:`TABLE_WIDTH` columns, else one block of
``key: value`` lines per row with bold keys; the layout is the core's
``layout_table``). Every marker is removed or replaced by one of equal
length (``-`` → ``•``), the whitespace between blocks is never more than
the source's, and list numbers are kept as written; so ``utf16(text) <=
utf16(markdown)``, except for a table (padding, repeated headers): the
core measures any text with a table as rendered (``has_table``). One other
construct breaks it: a tab in an indentation counts up to the next tab stop
(CommonMark), so an indented code block after ``*\t`` can come out with more
spaces than the source had characters. The converters check the claim and
send such a text as typed, without entities, so it holds always.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from hermes_gateway import has_table, layout_table

BULLET = "•"
RULE = "———"
#: Link targets Telegram accepts in a text_link; anything else shows as plain text.
LINK_SCHEMES = ("http://", "https://", "tg://")

_parser = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])
_INLINE_ENTITIES = {"strong": "bold", "em": "italic", "s": "strikethrough"}


@dataclass(frozen=True, slots=True)
class Entity:
    """One Telegram MessageEntity; offsets and lengths in UTF-16 code units."""

    type: str
    offset: int
    length: int
    url: str | None = None
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "offset": self.offset, "length": self.length}
        if self.url is not None:
            out["url"] = self.url
        if self.language:
            out["language"] = self.language
        return out


def utf16_units(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class _Writer:
    """Accumulates text and entities, tracking the position in UTF-16 units."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.entities: list[Entity] = []
        #: The space after a list marker, written only once the item has content (``- *`` is two empty items).
        self.pending = ""

    def begin(self) -> None:
        """Content starts here: write the pending space first (call before taking an entity's offset)."""
        if self.pending:
            self.parts.append(self.pending)
            self.pos += len(self.pending)
            self.pending = ""

    def write(self, text: str) -> None:
        if text:
            self.begin()
            self.parts.append(text)
            self.pos += utf16_units(text)

    def text_endswith(self, suffix: str) -> bool:
        """(An empty block wrote nothing: the separators around it must not add up.)"""
        tail = ""
        for part in reversed(self.parts):
            tail = part + tail
            if len(tail) >= len(suffix):
                break
        return tail.endswith(suffix)

    def at_line_start(self) -> bool:
        return not self.parts or self.parts[-1].endswith("\n")

    def entity(self, kind: str, start: int, **extra: Any) -> None:
        if self.pos > start:
            self.entities.append(Entity(kind, start, self.pos - start, **extra))

    @property
    def text(self) -> str:
        return "".join(self.parts)


def to_entities(markdown: str) -> tuple[str, list[Entity]]:
    """``markdown`` as Telegram text + entities. Raises only on a parser bug (callers send plain text then)."""
    return _no_longer(markdown, _trimmed(*_convert(markdown)))


def _no_longer(markdown: str, converted: tuple[str, list[Entity]]) -> tuple[str, list[Entity]]:
    """``converted``, or ``markdown`` as typed when tab stops made the conversion longer (module doc).

    A table may make it longer too, and rightly (its grid is padded, its
    records repeat the header): the core measures a text with a table as
    rendered (``hermes_gateway.has_table``), so only tabs alone fall back.
    """
    if "\t" in markdown and utf16_units(converted[0]) > utf16_units(markdown) and not has_table(markdown):
        return markdown, []
    return converted


def _convert(markdown: str) -> tuple[str, list[Entity]]:
    """Like :func:`to_entities`, before the whitespace at the ends is dropped."""
    plain = _plain_paragraphs(markdown)
    if plain is not None:
        return plain, []
    return _convert_parsed(markdown)


#: Characters that may make Markdown anywhere in a line (emphasis, code, links, autolinks, character
#: references, escapes, tables), and the line ends markdown-it reads differently from ``str.split``.
_MARKUP_ANYWHERE = re.compile(r"[\\`*_~\[\]<>&|\r\x00]")
#: What may open a block at the start of a line (lists, headings, quotes, setext underlines, breaks).
_BLOCK_START = frozenset("=+-#>0123456789")


def _plain_paragraphs(markdown: str) -> str | None:
    """What :func:`_convert_parsed` makes of text that has no Markdown in it, without parsing it; else None.

    A long reply of plain prose (the most common final text) cost ~0.5–1 ms of CPU in markdown-it-py,
    each time it is sent (issue 39: 1,000 final texts after the model's last token). Accepted only when no
    character that could make markup appears (:data:`_MARKUP_ANYWHERE`) and every line is blank or starts
    with a character that opens no block (:data:`_BLOCK_START`, no indentation) and ends without
    whitespace (no hard break, nothing markdown-it would trim). Such text is paragraphs: its lines as
    written, paragraphs one blank line apart. ``tests/test_telegram_formatting.py`` checks it against the
    parser on thousands of generated texts.
    """
    if _MARKUP_ANYWHERE.search(markdown):
        return None
    paragraphs: list[str] = []
    lines: list[str] = []
    for line in markdown.split("\n"):
        if not line:
            if lines:
                paragraphs.append("\n".join(lines))
                lines = []
            continue
        if line[0] in _BLOCK_START or line[0].isspace() or line[-1].isspace():
            return None
        lines.append(line)
    if lines:
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def _convert_parsed(markdown: str) -> tuple[str, list[Entity]]:
    """:func:`_convert` through markdown-it-py's parse."""
    out = _Writer()
    tokens = _parser.parse(markdown)
    pending_gap: int | None = None     # the source line where the last block ended, until the next block starts
    lists: list[dict[str, Any]] = []   # open lists: {"ordered": bool}
    quotes: list[int] = []             # start offsets of open block quotes
    headings: list[int] = []
    opened_blocks: list[Token] = []    # open paragraphs and headings: a closing token has no source map
    table: _Table | None = None        # the table being read: its cells are written once it is complete

    def separate(token: Token) -> None:
        nonlocal pending_gap
        if pending_gap is not None and out.pos > 0 and not out.text_endswith("\n\n"):
            start = token.map[0] if token.map else pending_gap
            out.pending = ""
            out.write("\n" if start - pending_gap < 1 or out.text_endswith("\n") else "\n\n")
        pending_gap = None

    def ended(token: Token) -> None:
        nonlocal pending_gap
        pending_gap = token.map[1] if token.map else (pending_gap or 0)

    for token in tokens:
        kind = token.type
        if table is not None:
            if kind == "table_close":
                separate(table.opening)
                _write_table(table, out)
                ended(table.opening)
                table = None
            elif kind == "tr_open":
                table.rows.append([])
            elif kind == "th_open":
                style = str(token.attrs.get("style") or "")
                table.aligns.append(style.removeprefix("text-align:") if style.startswith("text-align:") else "left")
            elif kind == "inline":
                table.rows[-1].append(token.children or [])
            continue
        if kind == "table_open":
            table = _Table(token)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append({"ordered": kind == "ordered_list_open"})
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            separate(token)
            if out.at_line_start():  # an item nested on its parent's line ("- * x") is not indented
                out.write("  " * (len(lists) - 1))
            out.write(f"{token.info}{token.markup}" if lists and lists[-1]["ordered"] else BULLET)
            out.pending = " "
        elif kind == "blockquote_open":
            separate(token)
            out.begin()
            quotes.append(out.pos)
        elif kind == "blockquote_close":
            out.entity("blockquote", quotes.pop())
        elif kind == "heading_open":
            separate(token)
            out.begin()
            headings.append(out.pos)
            opened_blocks.append(token)
        elif kind == "heading_close":
            out.entity("bold", headings.pop())
            ended(opened_blocks.pop())
        elif kind == "paragraph_open":
            separate(token)
            opened_blocks.append(token)
        elif kind == "paragraph_close":
            ended(opened_blocks.pop())
        elif kind == "inline":
            _inline(token.children or [], out)
        elif kind in ("fence", "code_block"):
            separate(token)
            out.begin()
            start = out.pos
            out.write(_keep_first_indent(token.content.rstrip("\n")))
            language = token.info.split()[0] if token.info.strip() else None
            out.entity("pre", start, language=language)
            ended(token)
        elif kind == "hr":
            separate(token)
            out.write(RULE)
            ended(token)
        elif kind == "html_block":  # not produced with html off; kept as typed if it ever is
            separate(token)
            out.write(token.content.rstrip("\n"))
            ended(token)
    return out.text, out.entities


@dataclass(slots=True)
class _Table:
    """A table's cells (inline tokens, row by row; the header first) until ``table_close``."""

    opening: Token
    rows: list[list[list[Token]]] = field(default_factory=list)
    aligns: list[str] = field(default_factory=list)   # per header cell: left, right or center


#: Widest monospace grid a table is shown as; wider ones become "key: value" lines (a phone's chat bubble).
TABLE_WIDTH = 40


def _write_table(table: _Table, out: _Writer) -> None:
    """A table as a ``pre`` grid when it fits :data:`TABLE_WIDTH`, else one block of bold-key lines per row.

    The layout is the core's (``hermes_gateway.render_table``); here it is
    written as entities. A record's value keeps its formatting (a link
    stays a link); a grid shows the cells' plain text.
    """
    if not table.rows:
        return
    width = len(table.rows[0])
    cells = [(row + [[]] * width)[:width] for row in table.rows]
    plain = [[_plain(cell) for cell in row] for row in cells]
    layout = layout_table(plain[0], plain[1:], width=TABLE_WIDTH, plain=plain[0], plain_rows=plain[1:],
                          aligns=table.aligns)
    if layout.grid is not None:
        out.begin()
        start = out.pos
        out.write("\n".join(layout.grid))
        out.entity("pre", start)
        return
    first_block = True
    for row_index, row in enumerate(cells[1:], start=1):
        columns = [c for c in range(width) if plain[row_index][c]]
        if not columns:
            continue
        if not first_block:
            out.write("\n\n")
        first_block = False
        for n, column in enumerate(columns):
            if n:
                out.write("\n")
            if plain[0][column]:
                out.begin()
                start = out.pos
                _inline(cells[0][column], out)
                out.entity("bold", start)
                out.write(": ")
            _inline(row[column], out)


#: Stands in for the spaces that indent a code block's first line (see :func:`_keep_first_indent`).
INDENT = "\u00a0"


def _keep_first_indent(code: str) -> str:
    """``code`` with its first line's indentation as no-break spaces, so Telegram keeps it.

    Telegram moves the whitespace that starts an entity out of it (and
    drops it at the start of a message): a code block whose first line is
    indented, such as the rest of a long block reopened at the top of the
    next message, would show that line flush left and the code misaligned.
    A no-break space is not whitespace to Telegram and is as wide as a
    space in the monospace block; only that first run is replaced (the
    price: a person copying the block gets no-break spaces there).
    """
    body = code.lstrip(" \t\n")
    lead = code[:len(code) - len(body)]
    blank_lines = lead[:lead.rfind("\n") + 1]   # Telegram drops them anyway; the first line with text counts
    indent = lead[len(blank_lines):]
    if not indent or not body:
        return code
    return blank_lines + INDENT * len(indent) + body


def _plain(children: list[Token]) -> str:
    """What a cell shows without its formatting."""
    scratch = _Writer()
    _inline(children, scratch)
    return scratch.text


def _inline(children: list[Token], out: _Writer) -> None:
    opened: list[tuple[str, int, str | None]] = []
    for child in children:
        kind = child.type
        if kind == "text" or kind == "html_inline":
            out.write(child.content)
        elif kind in ("softbreak", "hardbreak"):
            out.write("\n")
        elif kind == "code_inline":
            out.begin()
            start = out.pos
            out.write(child.content)
            out.entity("code", start)
        elif kind.endswith("_open") and kind[:-5] in _INLINE_ENTITIES:
            out.begin()
            opened.append((_INLINE_ENTITIES[kind[:-5]], out.pos, None))
        elif kind == "link_open":
            href = str(child.attrs.get("href") or "")
            out.begin()
            opened.append(("text_link", out.pos, href if href.startswith(LINK_SCHEMES) else None))
        elif kind.endswith("_close") and opened:
            entity, start, url = opened.pop()
            if entity != "text_link":
                out.entity(entity, start)
            elif url is not None:
                out.entity("text_link", start, url=url)
        elif kind == "image":
            out.write("".join(c.content for c in child.children or []) or child.content)


def _trimmed(text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """``text`` and ``entities`` exactly as Telegram will keep them (tdlib's ``fix_formatted_text``).

    Telegram moves the spaces and newlines at the start of an entity out of
    it (all but text links) and drops an entity of only whitespace; then it
    drops the whitespace at the end of the text, and at its start up to the
    first entity. (So a code block's first-line indentation is written with
    no-break spaces: :func:`_keep_first_indent`.) Doing the same here keeps
    the plugin's idea of a message equal to what the chat shows.
    """
    def blank(ch: str) -> bool:
        return ch <= " "

    moved: list[tuple[Entity, int, int]] = []   # entity, start, end: in characters
    units_before = _unit_offsets(text)
    for e in entities:
        start, end = _char_at(units_before, e.offset), _char_at(units_before, e.offset + e.length)
        if e.type != "text_link":
            while start < end and blank(text[start]):
                start += 1
        if text[start:end].strip():
            moved.append((e, start, end))
    last = len(text)
    while last > 0 and blank(text[last - 1]):
        last -= 1
    first = 0
    first_entity = min((start for _, start, _ in moved), default=last)
    while first < min(first_entity, last) and blank(text[first]):
        first += 1
    kept_text = text[first:last]
    kept = []
    for e, start, end in moved:
        end = min(end, last)
        if end > start:
            offset = utf16_units(text[first:start])
            kept.append(Entity(e.type, offset, utf16_units(text[start:end]), e.url, e.language))
    kept.sort(key=lambda e: (e.offset, -e.length))
    return kept_text, kept


def _unit_offsets(text: str) -> list[int] | None:
    """UTF-16 offset -> character index, or None when they are the same (no character outside the BMP)."""
    if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
        return None
    index = []
    for i, ch in enumerate(text):
        index.append(i)
        if ord(ch) > 0xFFFF:
            index.append(i)
    index.append(len(text))
    return index


def _char_at(index: list[int] | None, units: int) -> int:
    if index is None:
        return units
    return index[min(units, len(index) - 1)]


def render(text: str, cursor: str = "") -> tuple[str, list[Entity]]:
    """What the plugin sends for ``text``: a preview's trailing ``cursor`` stays plain, after the converted body.

    (Converted with the rest, a cursor right after a closing code fence would turn the fence into text.)
    """
    body, tail = text, ""
    if cursor and text.endswith(cursor):
        body, tail = text[: -len(cursor)], cursor
    converted, entities = convert_or_plain(body)
    if not converted.strip():  # e.g. only an empty link: Telegram refuses empty text, so show it as typed
        return text, []
    return converted + tail, entities


def convert_or_plain(markdown: str) -> tuple[str, list[Entity]]:
    """:func:`to_entities` (block by block, see :func:`convert_blocks`), or plain text if conversion fails."""
    try:
        return convert_blocks(markdown)
    except Exception:
        return markdown, []


# ------------------------------------------------------------------ previews: parse only what changed

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BARE_MARKER = re.compile(r"^\s*(([-*+]|\d{1,9}[.)])(\s+|$))+$")  # an empty list item: what follows may join it
_cache: OrderedDict[str, tuple[str, list[Entity]]] = OrderedDict()
CACHE_SIZE = 512


def convert_blocks(markdown: str) -> tuple[str, list[Entity]]:
    """The same result as :func:`to_entities`, converting unchanged leading blocks from a cache.

    A preview re-sends its whole message about once a second while only the
    last paragraph grows; parsing 4,000 characters each time costs ~7 ms of
    CPU in markdown-it-py. The text is cut at blank lines outside code
    fences where the next line is not indented (so no list item, quote or
    code block continues across the cut); no Markdown construct but a link
    reference definition spans such a cut, and text with one of those is
    converted whole. Each block but the last is looked up in a small cache.
    """
    plain = _plain_paragraphs(markdown)
    if plain is not None:  # no Markdown at all: nothing to parse, block by block or whole
        return _trimmed(plain, [])
    blocks = _top_level_blocks(markdown) if "]:" not in markdown else [markdown]
    if len(blocks) == 1:
        return to_entities(markdown)
    parts: list[tuple[str, list[Entity]]] = []
    for index, block in enumerate(blocks):
        text, block_entities = _cached(block) if index < len(blocks) - 1 else _convert(block)
        if text.strip():  # a block that ends in an empty one keeps no separator for it
            text = text.rstrip("\n")
            size = utf16_units(text)
            parts.append((text, [Entity(e.type, e.offset, min(e.length, size - e.offset), e.url, e.language)
                                 for e in block_entities if e.offset < size]))
    text_parts: list[str] = []
    entities: list[Entity] = []
    pos = 0
    for text, block_entities in parts:
        if text_parts:
            text_parts.append("\n\n")
            pos += 2
        text_parts.append(text)
        entities.extend(Entity(e.type, e.offset + pos, e.length, e.url, e.language) for e in block_entities)
        pos += utf16_units(text)
    return _no_longer(markdown, _trimmed("".join(text_parts), entities))


def _cached(block: str) -> tuple[str, list[Entity]]:
    hit = _cache.get(block)
    if hit is not None:
        _cache.move_to_end(block)
        return hit
    converted = _convert(block)
    _cache[block] = converted
    if len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return converted


def _top_level_blocks(markdown: str) -> list[str]:
    """``markdown`` cut at blank lines that no construct crosses (see :func:`convert_blocks`)."""
    lines = markdown.split("\n")
    blocks: list[str] = []
    start = 0
    fence: str | None = None
    blank_run = False
    previous = ""
    for index, line in enumerate(lines):
        if fence is not None:
            match = _FENCE.match(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                fence = None
            continue
        if not line.strip():
            blank_run = True
            continue
        if blank_run and index > start and line[:1] not in (" ", "\t") and not _continues(line) \
                and not _BARE_MARKER.match(previous):
            blocks.append("\n".join(lines[start:index]))
            start = index
        blank_run = False
        previous = line
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in line.strip()[len(match.group(1)):]):
            fence = match.group(1)
    blocks.append("\n".join(lines[start:]))
    return blocks


def _continues(line: str) -> bool:
    """A line that may belong to what comes before it even after a blank line (lazy list numbering aside)."""
    return line.startswith(("=", "-")) and not line.strip("=- ")  # a setext underline or rule: keep with it


# ------------------------------------------------------------------ where a split may not cut

#: Delimiter runs that, left unclosed in text, are most likely formatting still being typed.
_UNCLOSED = ("**", "__", "~~", "`")
#: A single ``*`` or ``_`` that can open emphasis (CommonMark's left-flanking, roughly), not escaped.
_EMPHASIS_OPENER = re.compile(r"(?<![\\*])\*(?=[^\s*])|(?<![\\\w])_(?=[^\s_])")
_REFERENCE = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def keep_whole(markdown: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` ranges of ``markdown`` that render as one entity: the core never cuts inside one.

    ``Platform.keep_whole`` for Telegram. A cut inside ``**bold**`` would
    show its markers in both messages, and a cut inside a code block that
    fits one message would break it needlessly (a table cut in two would
    leave its rows without their header). Ranges: code blocks
    (fenced or indented), tables, headings, bold, italic, strikethrough, inline code, links
    and images; and from a delimiter run that has not closed yet (``**``,
    ``` ` ```, ``~~``, ``__`` left in the text: mid-stream, its end has not
    arrived) to the end, and from a link still being typed (``[text](https://exa``,
    text to markdown-it until its ``)`` arrives: :class:`_Brackets`) or a
    single ``*``/``_`` that can open italic to the end of its paragraph
    (a preview cut inside one freezes, see :class:`_Brackets`). Inline ranges come from markdown-it's tokens,
    located in the source by walking each paragraph's text; a paragraph
    that cannot be located (never seen: it would need a construct not
    handled here) yields no ranges, so the cut there is the core's usual one.
    """
    try:
        tokens = _parser.parse(markdown)
    except Exception:
        return []
    lines = markdown.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for token in tokens:
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block", "heading_open", "table_open"):  # a heading is one bold entity
            spans.append((starts[first], min(starts[last] - 1, len(markdown))))
        elif token.type == "inline" and token.children:
            located = _locate_lines(token.content, lines, starts, first)
            if located is not None:
                spans.extend(_inline_spans(token.content, token.children, located))
    return spans


def _locate_lines(content: str, lines: list[str], starts: list[int], first: int) -> list[tuple[int, int]] | None:
    """For each line of an inline token's ``content``: (its start in the content, its start in the source)."""
    located = []
    at = 0
    for index, piece in enumerate(content.split("\n")):
        if first + index >= len(lines):
            return None
        source = lines[first + index]
        column = source.find(piece) if piece else len(source)
        if column < 0:
            return None
        located.append((at, starts[first + index] + column))
        at += len(piece) + 1
    return located


def _to_source(position: int, located: list[tuple[int, int]]) -> int:
    for line_start, source_start in reversed(located):
        if position >= line_start:
            return source_start + position - line_start
    return located[0][1]


def _inline_spans(content: str, children: list[Token], located: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The source ranges of the entities in one paragraph (see :func:`keep_whole`)."""
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    cursor = 0
    brackets: _Brackets | None = None   # found once, for the first text token with a "["
    typing_link = typing_emphasis = False
    links = 0                           # open links: nothing inside one can close after it

    def span(lo: int, hi: int) -> None:
        spans.append((_to_source(lo, located), _to_source(hi - 1, located) + 1))

    for child in children:
        kind = child.type
        if kind == "text":
            after = _skip_text(content, cursor, child.content)
            if after is None:
                return spans
            for run in _UNCLOSED:
                found = content.find(run, cursor, after)
                if found >= 0:  # a delimiter left as text: formatting whose end has not arrived (in this
                    span(found, len(content))  # paragraph: emphasis and code never close in a later one)
                    break
            opener = None if typing_emphasis or links else _EMPHASIS_OPENER.search(content, cursor, after + 1)
            if opener is not None and opener.start() < after:  # "*it is": italic whose "*" has not arrived
                typing_emphasis = True
                span(opener.start(), len(content))
            if not typing_link and not links and "[" in content[cursor:after]:
                brackets = brackets or _Brackets(content)
                link = brackets.link_being_typed(cursor, after)
                if link is not None:
                    typing_link = True
                    span(link, len(content))
            cursor = after
        elif kind in ("softbreak", "hardbreak"):
            newline = content.find("\n", cursor)
            if newline < 0:
                return spans
            cursor = newline + 1
            while cursor < len(content) and content[cursor] in " \t":
                cursor += 1
        elif kind == "code_inline":
            opening = content.find(child.markup, cursor)
            closing = content.find(child.markup, opening + len(child.markup)) if opening >= 0 else -1
            if closing < 0:
                return spans
            cursor = closing + len(child.markup)
            span(opening, cursor)
        elif kind in ("strong_open", "em_open", "s_open"):
            at = content.find(child.markup, cursor)
            if at < 0:
                return spans
            opened.append(at)
            cursor = at + len(child.markup)
        elif kind in ("strong_close", "em_close", "s_close"):
            at = content.find(child.markup, cursor)
            if at < 0 or not opened:
                return spans
            cursor = at + len(child.markup)
            span(opened.pop(), cursor)
        elif kind == "link_open":
            at = content.find("<" if child.markup == "autolink" else "[", cursor)
            if at < 0:
                return spans
            opened.append(at)
            cursor = at + 1
            links += 1
        elif kind == "link_close":
            links -= 1
            end = _link_end(content, cursor, autolink=child.markup == "autolink")
            if end is None or not opened:
                return spans
            cursor = end
            span(opened.pop(), cursor)
        elif kind == "image":
            at = content.find("![", cursor)
            bracket = content.find("]", at) if at >= 0 else -1
            end = _link_end(content, bracket, autolink=False) if bracket >= 0 else None
            if end is None:
                return spans
            cursor = end
            span(at, cursor)
    return spans


class _Brackets:
    """The unescaped ``[`` of a paragraph's source and the ``]`` each one pairs with, for links still being typed.

    Mid-stream, ``[the docs](https://exa`` is text to markdown-it: its ``)``
    has not arrived. A preview cut inside it freezes (a message already
    shown keeps its text when the reply goes on as it showed), so once the
    link closes it would show cut in two, ``](url)`` as text. Such a link
    can only end with its paragraph, so it is kept whole from its ``[`` (or
    ``![``) to the paragraph's end, as an unclosed ``**`` is.
    """

    __slots__ = ("content", "opens", "closes")

    def __init__(self, content: str) -> None:
        self.content = content
        self.opens: list[int] = []          # every unescaped "[", in order
        self.closes: dict[int, int] = {}    # "[" -> its "]" (nesting counted), when it has one
        stack: list[int] = []
        at = 0
        while at < len(content):
            ch = content[at]
            if ch == "\\":
                at += 2
                continue
            if ch == "[":
                self.opens.append(at)
                stack.append(at)
            elif ch == "]" and stack:
                self.closes[stack.pop()] = at
            at += 1

    def link_being_typed(self, lo: int, hi: int) -> int | None:
        """Where the first link still being typed starts, of those whose ``[`` is in ``content[lo:hi]`` (text)."""
        content = self.content
        for index in range(bisect_left(self.opens, lo), len(self.opens)):
            start = self.opens[index]
            if start >= hi:
                return None
            close = self.closes.get(start)
            if close is None or close + 1 == len(content) or (  # "[text", "[text]" or "[text](https://exa"
                    content[close + 1] in "([" and _link_end(content, close, autolink=False) is None):
                return start - 1 if start and content[start - 1] == "!" else start
        return None


def _skip_text(content: str, cursor: int, text: str) -> int | None:
    """Where ``text`` (a text token, escapes and character references decoded) ends in ``content``."""
    if content.startswith(text, cursor):
        return cursor + len(text)
    index = 0
    while index < len(text):
        reference = _REFERENCE.match(content, cursor)
        if reference is not None and html.unescape(reference.group()) == text[index:index + 1]:
            cursor = reference.end()  # a character reference decodes to one character
        elif content.startswith(text[index], cursor):
            cursor += 1
        elif content.startswith("\\" + text[index], cursor):
            cursor += 2
        else:
            return None
        index += 1
    return cursor


def _link_end(content: str, cursor: int, *, autolink: bool) -> int | None:
    """Just past a link's ``](destination "title")``, ``][label]``, ``]`` or an autolink's ``>``."""
    if autolink:
        end = content.find(">", cursor)
        return end + 1 if end >= 0 else None
    bracket = content.find("]", cursor)
    if bracket < 0:
        return None
    after = bracket + 1
    if content.startswith("(", after):
        depth, at = 0, after
        while at < len(content):
            ch = content[at]
            if ch == "\\":
                at += 2
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return at + 1
            at += 1
        return None
    if content.startswith("[", after):
        end = content.find("]", after)
        return end + 1 if end >= 0 else None
    return after
