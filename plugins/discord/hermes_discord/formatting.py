"""What Discord cannot render of the model's Markdown, rewritten into what it can: tables.

Discord renders bold, italic, links, code blocks and lists itself, but shows
a GitHub-style table as typed: a page of pipes. Each table becomes an
aligned grid in a code block when it fits :data:`TABLE_WIDTH` columns (what
Discord's phone app shows of a code line), else one block of ``**key**:
value`` lines per row (the core's :func:`hermes_gateway.rewrite_tables`).
Everything else is left as the model wrote it.

Since a laid-out table can be longer than its Markdown, the plugin declares
``Platform.rendered_length`` (:func:`rendered_length`): the core then fills
and splits messages by what is actually sent.
"""

from __future__ import annotations

from hermes_gateway import rewrite_tables, utf16_length

#: Widest grid shown as one; wider tables become key: value lines.
TABLE_WIDTH = 40


def render(text: str, cursor: str = "") -> str:
    """The message text Discord is sent for ``text``; a preview's trailing ``cursor`` stays after the tables."""
    body, tail = text, ""
    if cursor and text.endswith(cursor):
        body, tail = text[: -len(cursor)], cursor
    return rewrite_tables(body, width=TABLE_WIDTH, style="markdown") + tail


def rendered_length(text: str) -> int:
    """``Platform.rendered_length``: what Discord counts of ``text`` once its tables are laid out (UTF-16)."""
    return utf16_length(render(text))
