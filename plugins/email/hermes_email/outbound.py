"""A reply as a mail: threaded under the person's, plain text plus HTML, marked as an automatic reply.

Threading follows RFC 5322 §3.6.4: ``In-Reply-To`` is the mail answered,
``References`` the thread's ids ending with it. ``Auto-Submitted:
auto-replied`` (RFC 3834 §5) tells other responders not to answer us, and
``X-Auto-Response-Suppress: All`` keeps Exchange's out-of-office quiet.
The HTML is rendered from the Markdown with markdown-it (raw HTML in the
reply is escaped, never passed on).
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from hermes_gateway import rewrite_tables

_renderer: Any = None


def render_html(text: str) -> str:
    global _renderer
    if _renderer is None:
        from markdown_it import MarkdownIt

        _renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(["table", "strikethrough"])
    body = _renderer.render(text)
    return f'<!DOCTYPE html>\n<html><body style="font-family: sans-serif">\n{body}</body></html>\n'


def plain(text: str) -> str:
    """The text/plain part: the Markdown as typed, its tables laid out (no reader sees a page of pipes)."""
    return rewrite_tables(text, style="plain")


def plain_length(text: str) -> int:
    return len(plain(text))


def reply_subject(subject: str) -> str:
    subject = subject.strip() or "(no subject)"
    return subject if subject[:3].lower() == "re:" else f"Re: {subject}"


def compose(*, sender: str, to: str, subject: str, references: list[str], text: str,
            domain: str) -> EmailMessage:
    """One reply: ``text`` (Markdown) as text/plain and text/html, threaded under ``references[-1]``."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = reply_subject(subject)
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=domain)
    if references:
        message["In-Reply-To"] = references[-1]
        message["References"] = " ".join(references[-20:])
    message["Auto-Submitted"] = "auto-replied"
    message["X-Auto-Response-Suppress"] = "All"
    message.set_content(plain(text))
    message.add_alternative(render_html(text), subtype="html")
    return message


def attach(message: EmailMessage, filename: str, mime: str, data: bytes) -> None:
    maintype, _, subtype = (mime or "application/octet-stream").partition("/")
    if maintype == "text":  # sent as bytes, so its charset is never guessed
        maintype, subtype = "application", "octet-stream"
    message.make_mixed()
    message.add_attachment(data, maintype=maintype, subtype=subtype or "octet-stream", filename=filename)


