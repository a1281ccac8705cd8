"""Downloads of files people send: the limit before and while fetching, into the media directory only."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from hermes_gateway._core.content.downloads import Received, Refused, display_name, download, human_size

from files_helpers import Fetches, broken

MB = 1024 * 1024


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


async def test_a_file_within_the_limit_lands_in_the_media_directory_whole(tmp_path: Path) -> None:
    fetches = Fetches()
    data = os.urandom(300_000)
    got = await download(fetches.attachment("document", data, filename="notes.bin"), tmp_path / "media", MB)
    assert isinstance(got, Received)
    assert got.path.parent == (tmp_path / "media").resolve() and got.path.name.endswith("-notes.bin")
    assert got.path.read_bytes() == data and got.size == len(data)
    assert fetches.calls == ["notes.bin"]


async def test_a_declared_size_over_the_limit_is_refused_without_fetching(tmp_path: Path) -> None:
    fetches = Fetches()
    attachment = fetches.attachment("document", b"x", filename="scan.pdf", size=31 * MB)
    got = await download(attachment, tmp_path, 20 * MB)
    assert isinstance(got, Refused)
    assert got.line == "📎 scan.pdf: too large (31 MB; the limit is 20 MB)"
    assert fetches.calls == [] and files(tmp_path) == []


async def test_an_undeclared_size_is_checked_while_streaming_and_the_partial_file_removed(tmp_path: Path) -> None:
    fetches = Fetches()
    data = b"a" * (3 * MB)
    got = await download(fetches.attachment("video", data, filename="clip.mp4", declare_size=False),
                         tmp_path, 1 * MB)
    assert isinstance(got, Refused) and got.why == "too large (over the limit of 1 MB)"
    assert fetches.calls == ["clip.mp4"]
    assert fetches.bytes_out <= MB + 64 * 1024  # stopped at the first chunk past the limit, not the whole file
    assert files(tmp_path) == []


async def test_a_size_declared_wrongly_small_is_still_stopped_at_the_limit(tmp_path: Path) -> None:
    fetches = Fetches()
    got = await download(fetches.attachment("image", b"b" * (2 * MB), filename="big.png", size=10),
                         tmp_path, MB)
    assert isinstance(got, Refused) and "too large" in got.why
    assert files(tmp_path) == []


async def test_a_failed_fetch_is_one_line_and_leaves_no_file(tmp_path: Path) -> None:
    fetches = Fetches()
    got = await download(fetches.attachment("document", b"c" * 500_000, filename="a.txt", chunk=1000,
                                            fail=broken("the platform answered 404")), tmp_path, MB)
    assert isinstance(got, Refused)
    assert got.line == "📎 a.txt: could not be downloaded (the platform answered 404)"
    assert files(tmp_path) == []


async def test_another_exception_does_not_show_its_text_which_may_hold_a_token(tmp_path: Path,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    fetches = Fetches()
    secret = "https://files.example/bot123:SECRET/doc.txt"
    got = await download(fetches.attachment("document", b"d" * 10, filename="a.txt", chunk=1,
                                            fail=RuntimeError(secret)), tmp_path, MB)
    assert isinstance(got, Refused) and got.why == "could not be downloaded"
    assert "SECRET" not in caplog.text


async def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    got = await download(Fetches().attachment("document", b"", filename="empty.txt"), tmp_path, MB)
    assert isinstance(got, Refused) and got.why == "the file is empty"
    assert files(tmp_path) == []


async def test_a_fetch_that_never_ends_is_given_up(tmp_path: Path) -> None:
    async def slow():
        yield b"x"
        await asyncio.sleep(60)
        yield b"y"

    from hermes_gateway import Attachment

    got = await download(Attachment("document", slow, filename="slow.txt"), tmp_path, MB, timeout=0.2)
    assert isinstance(got, Refused) and got.why == "could not be downloaded (it took too long)"
    assert files(tmp_path) == []


@pytest.mark.parametrize("name", ["../../escape.txt", "/etc/passwd", "..\\..\\win.txt", "a/../../b.txt"])
async def test_a_file_name_never_writes_outside_the_media_directory(tmp_path: Path, name: str) -> None:
    media = tmp_path / "media"
    got = await download(Fetches().attachment("document", b"hello", filename=name), media, MB)
    assert isinstance(got, Received)
    assert got.path.parent == media.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["media"]


async def test_a_received_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    got = await download(Fetches().attachment("document", b"hello", filename="x.txt"), tmp_path / "media", MB)
    assert isinstance(got, Received)
    assert got.path.stat().st_mode & 0o077 == 0
    assert (tmp_path / "media").stat().st_mode & 0o077 == 0


def test_names_and_sizes_read_as_a_person_would_say_them() -> None:
    fetches = Fetches()
    assert display_name(fetches.attachment("image", b"")) == "photo"
    assert display_name(fetches.attachment("voice", b"")) == "voice note"
    assert display_name(fetches.attachment("document", b"", filename="dir/report.pdf")) == "report.pdf"
    assert human_size(31 * MB) == "31 MB" and human_size(1.5 * MB) == "1.5 MB" and human_size(640 * 1024) == "640 KB"
    assert human_size(1) == "1 byte"
