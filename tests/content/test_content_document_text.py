"""Documents as text for the prompt: text-like files and PDFs, named, bounded; other kinds a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_gateway._core.content.document_text import DocumentError, document_text

from files_helpers import pdf_bytes


def write(tmp_path: Path, data: bytes, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name,mime", [("notes.txt", None), ("README.md", None), ("data.csv", "text/csv"),
                                       ("x.json", "application/json"), ("main.py", None), ("noext", "text/plain")])
def test_text_like_files_are_read_with_their_name(tmp_path: Path, name: str, mime: str | None) -> None:
    doc = document_text(write(tmp_path, "héllo, wörld\nline two".encode(), name), name, mime, 1000)
    assert doc.text == "héllo, wörld\nline two" and not doc.cut
    assert doc.prompt() == f"[document: {name} (text)]\nhéllo, wörld\nline two\n[end of {name}]"


def test_a_long_text_is_cut_at_the_bound_and_says_so(tmp_path: Path) -> None:
    doc = document_text(write(tmp_path, b"word " * 100_000, "big.txt"), "big.txt", "text/plain", 1000)
    assert len(doc.text) == 1000 and doc.cut
    assert "[cut here: only the first 1,000 characters are shown]" in doc.prompt()


def test_utf16_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    doc = document_text(write(tmp_path, "hello from Windows".encode("utf-16"), "w.txt"), "w.txt", None, 100)
    assert doc.text == "hello from Windows"


def test_a_binary_file_named_txt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="not a text file"):
        document_text(write(tmp_path, b"\x00\x01\x02binary" * 10, "x.txt"), "x.txt", None, 100)


def test_a_pdf_is_not_read_in_this_process(tmp_path: Path) -> None:
    """PDFs go to pdf_text's worker process (tests/content/test_content_pdf_text.py)."""
    with pytest.raises(ValueError, match="pdf_text"):
        document_text(write(tmp_path, pdf_bytes("hi"), "r.pdf"), "r.pdf", "application/pdf", 1000)


def test_other_kinds_are_named_in_the_reason(tmp_path: Path) -> None:
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    with pytest.raises(DocumentError, match="only read text files and PDFs"):
        document_text(write(tmp_path, b"PK\x03\x04", "a.docx"), "a.docx", mime, 100)
