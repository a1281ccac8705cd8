"""What WhatsApp cannot render of the model's Markdown, rewritten into what it can: tables.

WhatsApp shows a GitHub-style table as typed. Each table becomes an aligned
grid between triple backticks (WhatsApp's monospace) when it fits
:data:`TABLE_WIDTH` columns of a phone screen, else one block of ``*key*:
value`` lines per row (WhatsApp's bold is one asterisk), via the core's
:func:`hermes_gateway.rewrite_tables`. The rest is sent as the model wrote it.

A laid-out table can be longer than its Markdown, so the plugin declares
``Platform.rendered_length`` (:func:`rendered_length`) and the core splits
by what is actually sent.
"""

from __future__ import annotations

from hermes_gateway import rewrite_tables

#: Widest grid shown as one: WhatsApp is read on phones, whose monospace lines are narrow.
TABLE_WIDTH = 32


def render(text: str) -> str:
    """The message body WhatsApp is sent for ``text``."""
    return rewrite_tables(text, width=TABLE_WIDTH, style="whatsapp")


def rendered_length(text: str) -> int:
    """``Platform.rendered_length``: the characters WhatsApp counts of ``text`` once its tables are laid out."""
    return len(render(text))
