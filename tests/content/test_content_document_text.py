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


def test_a_pdf_becomes_its_text_page_by_page(tmp_path: Path) -> None:
    path = write(tmp_path, pdf_bytes("Quarterly report: revenue grew", "Second page"), "r.pdf")
    doc = document_text(path, "r.pdf", "application/pdf", 20_000)
    assert doc.text == "Quarterly report: revenue grew\n\nSecond page"
    assert doc.prompt().startswith("[document: r.pdf (PDF, 2 pages)]\nQuarterly report")


def test_a_long_pdf_stops_reading_pages_at_the_bound(tmp_path: Path) -> None:
    path = write(tmp_path, pdf_bytes(*[f"page {i} " + "x" * 80 for i in range(50)]), "long.pdf")
    doc = document_text(path, "long.pdf", None, 300)
    assert len(doc.text) == 300 and doc.cut and doc.text.startswith("page 0 ")


@pytest.mark.parametrize("data,why", [(b"%PDF-1.4 garbage", "not a PDF I can read"),
                                      (pdf_bytes(""), "no text I can read")])
def test_a_broken_or_textless_pdf_is_a_reason(tmp_path: Path, data: bytes, why: str) -> None:
    with pytest.raises(DocumentError, match=why):
        document_text(write(tmp_path, data, "s.pdf"), "s.pdf", "application/pdf", 1000)


def test_other_kinds_are_named_in_the_reason(tmp_path: Path) -> None:
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    with pytest.raises(DocumentError, match="only read text files and PDFs"):
        document_text(write(tmp_path, b"PK\x03\x04", "a.docx"), "a.docx", mime, 100)
