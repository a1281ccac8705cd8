"""What Slack's ``markdown_text`` cannot render of the model's Markdown, rewritten into what it can: tables.

Slack's markdown renders bold, links, lists and code blocks, but shows a
GitHub-style table as typed. Each table becomes an aligned grid in a code
block when it fits :data:`TABLE_WIDTH` columns (Slack's phone app), else
one block of ``**key**: value`` lines per row (the core's
:func:`hermes_gateway.rewrite_tables`).

Only a message's final text is laid out. A native stream can only append,
and a table laid out while its rows still arrive changes lines already
streamed; so the stream shows the table as typed, and the final text (which
then no longer extends what was streamed) replaces it through
``chat.stopStream`` + ``chat.update``, as :mod:`.outbound` does for any
final text that differs. ``Platform.rendered_length`` (:func:`rendered_length`)
lets the core split by the laid-out length.
"""

from __future__ import annotations

from hermes_gateway import rewrite_tables

#: Widest grid shown as one; wider tables become key: value lines.
TABLE_WIDTH = 40


def render(text: str) -> str:
    """The final text Slack is sent for ``text``."""
    return rewrite_tables(text, width=TABLE_WIDTH, style="markdown")


def rendered_length(text: str) -> int:
    """``Platform.rendered_length``: the characters Slack counts of ``text`` once its tables are laid out."""
    return len(render(text))
