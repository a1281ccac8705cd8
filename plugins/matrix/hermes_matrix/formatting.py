"""A reply's Markdown as Matrix shows it: ``org.matrix.custom.html`` in ``formatted_body``, the text in ``body``.

``body`` is the Markdown as written (what a client without HTML shows, and
what Element puts there too), with tables laid out as plain text;
``formatted_body`` is the same rendered by markdown-it (CommonMark, raw HTML
in the model's text escaped, not passed through).

**Size.** Synapse refuses an event whose whole PDU (content plus the
envelope: ids, hashes, signatures, auth and prev events) is over 65,536
bytes of canonical JSON (``M_TOO_LARGE``). An edit carries the text twice
(``body`` and ``m.new_content.body``) and the HTML twice. The platform
declares :data:`MAX_MESSAGE_BYTES` = 15,000 UTF-8 bytes of text, derived
so the plain-text edit always fits whatever the text holds:
JSON escaping at most doubles a byte (``"`` → ``\\"``; the C0 controls that
JSON would write as 6-byte ``\\u00XX`` are removed first, :func:`clean`),
so two copies are at most 4 × 15,000 + 2 = 60,002 bytes; the keys and
relation are under 400; that leaves over 5 KB of :data:`CONTENT_BUDGET`'s
headroom under 65,536 for the envelope (a Synapse PDU envelope is about
1-2 KB). The HTML comes on top only when it fits: :func:`message_content`
measures the content as JSON and leaves ``formatted_body`` out when the
whole would pass :data:`CONTENT_BUDGET` (the text is then shown plain,
never cut or refused).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hermes_gateway import rewrite_tables, utf8_length

#: Synapse's (and the spec's) limit on one event, as canonical JSON of the PDU.
MAX_EVENT_BYTES = 65_536
#: What an event's content may take: the rest is left to the PDU's envelope.
CONTENT_BUDGET = MAX_EVENT_BYTES - 4_096
#: The longest text one message carries, in UTF-8 bytes (derived in the module's docstring).
MAX_MESSAGE_BYTES = 15_000
#: C0 controls but tab and newline: nothing a chat shows, and six bytes each once JSON-escaped.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
TABLE_WIDTH = 60

_renderer: Any = None


def clean(text: str) -> str:
    """The text without control characters (see the module's docstring for why)."""
    return _CONTROLS.sub("", text)


def plain(text: str) -> str:
    """``body``: the Markdown as written, tables laid out (no row of pipes on any client)."""
    return clean(rewrite_tables(text, width=TABLE_WIDTH, style="markdown"))


def rendered_length(text: str) -> int:
    """The UTF-8 length of what ``body`` carries (a laid-out table may be longer than its Markdown)."""
    return utf8_length(plain(text))


def html(text: str) -> str:
    """``formatted_body``: the Markdown rendered by markdown-it (CommonMark; raw HTML escaped, links kept)."""
    global _renderer
    if _renderer is None:
        from markdown_it import MarkdownIt

        _renderer = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("strikethrough")
    return str(_renderer.render(text)).strip()


def json_size(content: dict[str, Any]) -> int:
    """The content's size as Synapse counts it (compact JSON, UTF-8 kept as is)."""
    return len(json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def message_content(text: str, *, edit_of: str | None = None, msgtype: str = "m.text",
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The content of a new message (``edit_of`` None) or of an ``m.replace`` edit of the message ``edit_of``.

    An edit's ``m.new_content`` is the whole new content (Matrix replaces all of
    it): ``body``, ``format`` and ``formatted_body``, with the ``* `` fallback only
    outside it, for clients that do not know edits. ``m.mentions`` is empty:
    the bot pings nobody (and never by a display name in its text).
    """
    body = plain(text)
    shown = {"msgtype": msgtype, "body": body, "format": "org.matrix.custom.html",
             "formatted_body": html(body), "m.mentions": {}}
    for with_html in (True, False):
        new: dict[str, Any] = dict(shown) if with_html else {"msgtype": msgtype, "body": body, "m.mentions": {}}
        if edit_of is None:
            content: dict[str, Any] = {**new, **(extra or {})}
        else:
            content = {"msgtype": msgtype, "body": "* " + body, "m.mentions": {}, "m.new_content": new,
                       "m.relates_to": {"rel_type": "m.replace", "event_id": edit_of}}
            if with_html:
                content["format"] = "org.matrix.custom.html"
                content["formatted_body"] = "* " + str(new["formatted_body"])
        if json_size(content) <= CONTENT_BUDGET:
            return content
    return content  # plain text within MAX_MESSAGE_BYTES always fits (the docstring's arithmetic)
