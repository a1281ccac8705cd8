"""A document a person sent, as text for the prompt: text-like files and PDFs, bounded.

Plain text, Markdown, CSV, JSON, XML, YAML and source code are read as
UTF-8 (UTF-16 with a byte-order mark too), at most a little more than
``media.document_max_chars`` characters' worth of bytes, never the whole
file; PDFs are read by a child process within a time, page and memory
budget (:mod:`.pdf_text`). What goes to the model carries the file's name
and says when it was cut, so the model can say it read only the start::

    [document: report.pdf (PDF, 3 pages)]
    ...the text...
    [end of report.pdf]

Other kinds (a .docx, a zip, a binary) raise :class:`DocumentError`, whose
message is what the person is told; the model then gets a stand-in line.
Blocking (file reads): call :func:`document_text` in a thread.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from ..errors import HermesError

#: File name endings read as text (besides any ``text/*`` mime type).
TEXT_SUFFIXES = frozenset("""
txt text md markdown rst csv tsv json jsonl ndjson xml yaml yml toml ini cfg conf log html htm css
py pyi js mjs cjs ts tsx jsx java kt kts scala go rs c h cc cpp cxx hpp hh cs swift m mm rb php pl pm lua
r jl sh bash zsh fish ps1 bat sql graphql proto tex bib diff patch env properties gradle dart ex exs erl
hs ml clj vue svelte dockerfile makefile cmake nix tf hcl srt vtt
""".split())
TEXT_MIMES = frozenset({"application/json", "application/xml", "application/x-yaml", "application/yaml",
                        "application/toml", "application/x-sh", "application/javascript",
                        "application/x-python", "application/sql", "application/x-ndjson", "application/csv"})
PDF_MIME = "application/pdf"


class DocumentError(HermesError):
    """The document cannot be read as text; the message is the reason the person is told."""


@dataclass(frozen=True)
class DocumentText:
    """A document's text for the prompt: ``text`` at most ``max_chars``; ``cut`` when there was more."""

    name: str
    kind: str      # "PDF, 3 pages" / "text"
    text: str
    cut: bool
    line: str | None = None  # for the person: why reading stopped early ("read only 3 of its 40 pages: ..."),
    #                          pages that could not be read

    def prompt(self) -> str:
        """The document as it goes into the prompt, delimited and named."""
        note = f"\n[cut here: only the first {len(self.text):,} characters are shown]" if self.cut else ""
        if self.line:  # why it stopped early, or a page that could not be read (not a cut)
            note = f"\n[{'cut here: ' if self.cut else ''}{self.line}]"
        return f"[document: {self.name} ({self.kind})]\n{self.text}{note}\n[end of {self.name}]"


def is_pdf(name: str, mime: str | None) -> bool:
    return (mime or "").lower() == PDF_MIME or name.lower().endswith(".pdf")


def is_text(name: str, mime: str | None) -> bool:
    mime = (mime or "").split(";", 1)[0].strip().lower()
    if mime.startswith("text/") or mime in TEXT_MIMES or mime.endswith("+json") or mime.endswith("+xml"):
        return True
    lower = name.lower()
    suffix = lower.rsplit(".", 1)[-1] if "." in lower else lower
    return suffix in TEXT_SUFFIXES


def document_text(path: str | Path, name: str, mime: str | None, max_chars: int) -> DocumentText:
    """The text of the document at ``path`` (blocking); :class:`DocumentError` if it has none to give.

    Not for PDFs (:func:`is_pdf`): those are read by :func:`.pdf_text.pdf_text`, in a process it can end."""
    if is_pdf(name, mime):
        raise ValueError("a PDF is read by pdf_text.pdf_text, not in this process")
    if is_text(name, mime):
        return _plain_text(Path(path), name, max_chars)
    kind = (mime or "").split(";", 1)[0] or (name.rsplit(".", 1)[-1] if "." in name else "unknown")
    raise DocumentError(f"I can only read text files and PDFs, not {kind}")


def _plain_text(path: Path, name: str, max_chars: int) -> DocumentText:
    limit = max_chars * 4 + 4  # UTF-8 takes at most 4 bytes a character: enough bytes for max_chars, never the file
    with open(path, "rb") as f:
        raw = f.read(limit + 1)
    more_bytes = len(raw) > limit
    raw = raw[:limit]
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = raw.decode("utf-16", errors="replace")
    else:
        if b"\x00" in raw[:8192]:
            raise DocumentError("not a text file (it holds binary data)")
        text = raw.decode("utf-8-sig", errors="replace")
    if text and text.count("\ufffd") > max(8, len(text) // 20):
        raise DocumentError("not a text file I can read (not UTF-8)")
    cut = more_bytes or len(text) > max_chars
    return DocumentText(name, "text", text[:max_chars], cut)
