"""The media directory: bytes are written inside it, and no path a tool names leads out of it."""

from __future__ import annotations

import logging
import os

from hermes_gateway import Media
from hermes_gateway._core.media_dir import OUTSIDE, MediaDirectory


def test_bytes_are_written_inside_under_an_unguessable_name(tmp_path):
    store = MediaDirectory(tmp_path / "media")
    first = store.admit(Media(data=b"PNG", filename="qr.png"))
    second = store.admit(Media(data=b"PNG2", filename="qr.png"))
    assert first.data is None and first.size == 3 and first.filename == "qr.png"
    assert first.path != second.path and open(first.path, "rb").read() == b"PNG"
    assert os.path.dirname(first.path) == str((tmp_path / "media").resolve())
    assert os.path.basename(first.path).endswith("-qr.png") and len(os.path.basename(first.path)) > 20
    assert oct(os.stat(first.path).st_mode & 0o777) == "0o600"


def test_a_path_inside_is_taken_relative_or_absolute(tmp_path):
    (tmp_path / "media").mkdir()
    (tmp_path / "media" / "chart.png").write_bytes(b"12345")
    store = MediaDirectory(tmp_path / "media")
    assert store.admit(Media(path="chart.png")).size == 5
    assert store.admit(Media(path=str(tmp_path / "media" / "chart.png"))).path == str(
        (tmp_path / "media" / "chart.png").resolve())


def test_dot_dot_and_symlinks_out_are_refused_with_one_line(tmp_path, caplog):
    (tmp_path / "media").mkdir()
    (tmp_path / "secret.txt").write_text("key")
    os.symlink(tmp_path / "secret.txt", tmp_path / "media" / "innocent.png")
    store = MediaDirectory(tmp_path / "media")
    with caplog.at_level(logging.WARNING):
        for path in ("../secret.txt", str(tmp_path / "secret.txt"), "innocent.png", "/etc/passwd",
                     str(tmp_path / "media")):
            item = store.admit(Media(path=path))
            assert item.refused == OUTSIDE and item.path is None, path
    assert len(caplog.records) == 5 and all("\n" not in r.getMessage() for r in caplog.records)
    assert "refused: outside the media directory" in caplog.records[0].getMessage()


def test_a_missing_file_inside_says_so(tmp_path):
    (tmp_path / "media").mkdir()
    assert MediaDirectory(tmp_path / "media").admit(Media(path="gone.png")).refused == "file not found"


def test_links_pass_untouched(tmp_path):
    item = Media(url="https://example.com/a.png")
    assert MediaDirectory(tmp_path).admit(item) is item


def test_old_files_the_gateway_wrote_are_swept_and_nothing_else(tmp_path, monkeypatch):
    import hermes_gateway._core.media_dir as media_dir

    monkeypatch.setattr(media_dir, "_last_prune", {})
    store = MediaDirectory(tmp_path, keep=3600)
    old = store.admit(Media(data=b"old", filename="old.png")).path
    mine = tmp_path / "report.pdf"          # a tool's own file: never touched
    mine.write_bytes(b"pdf")
    for path in (old, mine):
        os.utime(path, (0, 0))              # 1970: far older than an hour
    monkeypatch.setattr(media_dir, "_last_prune", {})
    new = store.admit(Media(data=b"new", filename="new.png")).path
    assert not os.path.exists(old) and os.path.exists(new) and mine.exists()
    os.utime(new, (0, 0))
    store.admit(Media(data=b"x", filename="x.png"))   # within the hour: no second sweep
    assert os.path.exists(new)
