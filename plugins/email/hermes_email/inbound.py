"""A received mail, read: who sent it, which thread it belongs to, its words, its files, and whether to answer.

Everything here works on bytes a stranger wrote: the parser is the
standard library's (``email``, policy ``default``), every header is read
defensively, and whatever cannot be read is a :class:`Unreadable` (one log
line for the caller), never an exception that reaches the receiving loop.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import re
from dataclasses import dataclass, field
from email.message import Message
from email.utils import getaddresses, parseaddr
from typing import AsyncIterator

#: At most this much of a mail's text goes to the model (the rest is cut, with a line saying so).
MAX_TEXT_CHARS = 20_000
#: Header values longer than this are not believed (a hostile mail's megabyte-long References).
MAX_HEADER_CHARS = 8_000
#: A mail of more parts than this (lines opening one of its declared MIME boundaries, counted before parsing)
#: is not read: the standard library's parser takes ~0.6 ms a part, 57 s for 100,000 empty parts in 5 MB.
MAX_PARTS = 1_000
_BOUNDARY = re.compile(rb'boundary\s*=\s*"?([^";\s]{1,70})', re.I)  # RFC 2046: 1 to 70 characters
#: Nor one of more multipart sections than this: its parser and ``walk()`` recurse once per level (about
#: 1,000 levels in 70 kB raised RecursionError after a second's work). A real mail nests three or four.
MAX_MULTIPARTS = 100
MESSAGE_ID = re.compile(r"<[^<>\s]{1,500}>")
#: Senders that are machines by name (RFC 3834 §2: MAY ignore owner-*, *-request, MAILER-DAEMON).
MACHINE_SENDER = re.compile(r"^(mailer-daemon|postmaster|owner-.*|.*-request|.*-owner|no-?reply)@", re.I)


class Unreadable(ValueError):
    """A mail that cannot be answered: the reason, in a few words."""


@dataclass(frozen=True)
class Mail:
    """What the plugin needs of one received mail."""

    message_id: str                 # "<id@host>" (made up from the UID when the mail has none)
    sender: str                     # bare lower-case address: who the reply goes to
    subject: str
    references: tuple[str, ...]     # the thread's ids, oldest first, ending with this mail's own
    text: str
    automatic: str | None           # why this is a machine's mail (never answered), or None
    files: tuple["MailFile", ...] = field(default=())

    @property
    def root(self) -> str:
        return self.references[0]

    @property
    def chat_id(self) -> str:
        return thread_chat_id(self.root)


@dataclass(frozen=True)
class MailFile:
    """An attached file; its bytes are decoded only when the core asks (:meth:`chunks`)."""

    filename: str
    mime: str
    size: int                       # decoded size, estimated from the encoded part (base64: 3/4)
    part: Message

    async def chunks(self) -> AsyncIterator[bytes]:
        data = _payload(self.part)
        for start in range(0, len(data), 65536):
            yield data[start:start + 65536]


def thread_chat_id(root: str) -> str:
    """A thread's chat id: stable, short, from its first Message-ID (any mail of the thread names it first)."""
    return "mail-" + hashlib.sha256(root.strip().lower().encode("utf-8", "replace")).hexdigest()[:24]


def message_ids(value: str | None) -> list[str]:
    return MESSAGE_ID.findall(str(value or "")[:MAX_HEADER_CHARS])


def header(message: Message, name: str) -> str:
    """A header's value as text, or "" (a header that does not decode is treated as absent)."""
    try:
        value = message.get(name)
    except Exception:  # a malformed encoded-word or a defect the policy raises on
        return ""
    return str(value or "")[:MAX_HEADER_CHARS].strip()


def automatic(message: Message) -> str | None:
    """Why this mail was sent by a machine (RFC 3834 and the list headers), or None for a person's mail."""
    submitted = header(message, "Auto-Submitted").split(";")[0].strip().lower()
    if submitted and submitted != "no":
        return f"Auto-Submitted: {submitted[:40]}"
    precedence = header(message, "Precedence").lower()
    if precedence in ("bulk", "list", "junk"):
        return f"Precedence: {precedence}"
    for name in ("List-Id", "List-Unsubscribe", "List-Post"):
        if header(message, name):
            return f"a mailing list ({name})"
    if header(message, "Return-Path").replace(" ", "") == "<>":
        return "a null Return-Path (a bounce)"
    sender = parseaddr(header(message, "From"))[1].lower()
    if MACHINE_SENDER.match(sender):
        return f"a machine's sender address ({sender[:60]})"
    if header(message, "X-Autoreply") or header(message, "X-Autorespond"):
        return "an X-Autoreply header"
    return None


def parse_mail(raw: bytes, fallback_id: str) -> Mail:
    """Read one mail (``raw``, at most the plugin's size limit). Raises :class:`Unreadable`.

    CPU-bound on a stranger's bytes: the caller runs it in a thread, and its shape is bounded first
    (:data:`MAX_PARTS`, :data:`MAX_MULTIPARTS`: byte counts, no parsing).
    """
    if raw.lower().count(b"multipart/") > MAX_MULTIPARTS:
        raise Unreadable(f"over {MAX_MULTIPARTS} multipart sections")
    boundaries = set(_BOUNDARY.findall(raw, 0, len(raw)))
    if len(boundaries) > MAX_MULTIPARTS or sum(raw.count(b"\n--" + b) for b in boundaries) > MAX_PARTS:
        raise Unreadable(f"over {MAX_PARTS:,} MIME parts")
    try:
        message = email.message_from_bytes(raw, policy=email.policy.default)
    except Exception as exc:  # the parser is lenient; anything raised is a mail nobody can read
        raise Unreadable(f"the mail does not parse ({type(exc).__name__})") from None
    addresses = getaddresses([header(message, "Reply-To") or header(message, "From")])
    sender = next((a.lower() for _, a in addresses if "@" in a), "")
    if not sender or any(c in sender for c in "\r\n<>,;\"") or len(sender) > 254:
        raise Unreadable("no sender address (From)")
    own = (message_ids(header(message, "Message-ID")) or [fallback_id])[0]
    references = message_ids(header(message, "References")) or message_ids(header(message, "In-Reply-To"))[:1]
    references = [r for r in references if r != own][-50:]  # a thread's newest 50 ids are plenty
    subject = " ".join(header(message, "Subject").split())[:300]
    text, files = _content(message)
    return Mail(own, sender, subject, (*references, own), text, automatic(message), tuple(files))


def _content(message: Message) -> tuple[str, list[MailFile]]:
    plain: str | None = None
    html: str | None = None
    files: list[MailFile] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        disposition = (part.get_content_disposition() or "").lower()
        filename = _filename(part)
        if disposition == "attachment" or filename or not kind.startswith("text/"):
            encoded = part.get_payload(decode=False)
            size = len(encoded) if isinstance(encoded, str) else 0
            if (part.get("Content-Transfer-Encoding") or "").lower().strip() == "base64":
                size = size * 3 // 4
            files.append(MailFile(filename or f"attachment-{len(files) + 1}", kind, size, part))
        elif kind == "text/plain" and plain is None:
            plain = _text(part)
        elif kind == "text/html" and html is None:
            html = _text(part)
    text = plain if plain is not None else _html_to_text(html or "")
    text = strip_quoted(text)
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + "\n[… the rest of this long mail was cut]"
    return text, files


def _filename(part: Message) -> str:
    try:
        name = part.get_filename() or ""
    except Exception:
        return ""
    name = re.sub(r"[\x00-\x1f/\\]", "_", str(name)).strip()
    return name[:200]


def _text(part: Message) -> str:
    try:
        payload = _payload(part)
        charset = part.get_content_charset() or "utf-8"
        try:
            return payload.decode(charset, "replace")
        except LookupError:  # an unknown charset name
            return payload.decode("utf-8", "replace")
    except Exception:
        return ""


def _payload(part: Message) -> bytes:
    """A part's bytes, its transfer encoding undone (a broken one gives what can be read)."""
    data = part.get_payload(decode=True)
    return bytes(data) if isinstance(data, (bytes, bytearray)) else b""


def _html_to_text(html: str) -> str:
    from html import unescape

    html = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", html)
    html = re.sub(r"(?i)<\s*(br|/p|/div|/li|/h\d)\s*/?>", "\n", html)
    return unescape(re.sub(r"<[^>]{0,2000}>", "", html))


def strip_quoted(text: str) -> str:
    """The person's new words: the quoted mail below them (``> …`` and its "On … wrote:" line) dropped."""
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith(">")):
        lines.pop()
    if lines and re.search(r"\bwrote:\s*$", lines[-1]) and len(lines) < len(text.split("\n")):
        lines.pop()
    return "\n".join(lines).strip()


