"""Local files as attachments (the terminal's /attach): kind from the name, size from the disk, read in chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_gateway._core.content import local_files
from hermes_gateway._core.content.local_files import file_attachment


async def test_a_file_is_described_and_streams_its_bytes_in_chunks(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_files, "CHUNK", 1000)
    data = bytes(range(256)) * 10
    (tmp_path / "scan.pdf").write_bytes(data)
    attachment = file_attachment(tmp_path / "scan.pdf")
    assert (attachment.kind, attachment.mime, attachment.size, attachment.filename) == \
        ("document", "application/pdf", len(data), "scan.pdf")
    chunks = [c async for c in attachment.fetch()]
    assert [len(c) for c in chunks] == [1000, 1000, 560] and b"".join(chunks) == data


@pytest.mark.parametrize("name,kind", [("a.png", "image"), ("b.JPG", "image"), ("c.ogg", "audio"),
                                       ("d.mp4", "video"), ("e.txt", "document"), ("noext", "document")])
def test_the_kind_comes_from_the_name(tmp_path: Path, name: str, kind: str) -> None:
    (tmp_path / name).write_bytes(b"x")
    assert file_attachment(tmp_path / name).kind == kind


def test_a_missing_path_or_a_directory_is_an_os_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        file_attachment(tmp_path / "nope.png")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        file_attachment(tmp_path)
