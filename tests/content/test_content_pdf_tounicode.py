"""A PDF whose font has a huge ToUnicode map: its cost stays in the PDF reader's process, capped by media.pdf_memory_mb.

Issue 33 found an 83 KB PDF with a large ToUnicode map adding ~440 MB to
the gateway while pypdf read it in a thread. The PDF built here is ~32 KB:
page 0 is an ordinary line, page 1 uses a font whose ToUnicode CMap maps
3,000,000 codes in one ``beginbfrange`` array (96 MB of hex strings,
deflated). pypdf splits the whole array into tokens before any of its own
limits (100,000 entries) is checked: plain pypdf in a process of its own
peaks at ~500 MB of RSS and ~3 s of CPU on it, then gives up with an error.
In the worker (:mod:`hermes_gateway._core.content.pdf_worker`) the address
space is capped, so it runs out of memory at the cap, quickly; the person
gets the first page and one line, and the gateway's memory does not move.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from hermes_gateway.testing.samples import pdf_file

#: The worker's cap in this test (MiB): an ordinary page needs ~150 MiB of address space (Python and pypdf),
#: the map ~500 MB more. Lower than the default 512 MiB so the worker reaches it in ~1 s of CPU, not ~4 s.
CAP_MB = 256


def tounicode_pdf(first_page: str, entries: int = 3_000_000) -> bytes:
    """Two pages: ``first_page`` in Helvetica, then a line in a font whose ToUnicode map has ``entries`` codes."""
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
            b"1 beginbfrange\n<0000> <FFFF> [" + b"<0041> " * entries + b"]\nendbfrange\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end\n")
    packed = zlib.compress(cmap, 9)
    first = f"BT /F1 12 Tf 72 720 Td ({first_page}) Tj ET".encode("latin-1")
    second = b"BT /F2 12 Tf 72 720 Td <00010002> Tj ET"
    return pdf_file([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(first) + first + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 7 0 R "
        b"/Resources << /Font << /F2 8 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(second) + second + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 9 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
    ])


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def reset_peak() -> None:
    """Start VmHWM again from the current RSS (Linux ≥ 4.0); where that is refused the old peak stays, which
    only makes the bound below looser, never wrong."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the gateway's memory is read from /proc")
async def test_a_huge_tounicode_map_costs_one_line_and_never_the_gateways_memory(tmp_path: Path) -> None:
    """Through the reference platform: the first page and the caption are answered, after one line saying the
    reader stopped; the worker died at media.pdf_memory_mb (uncapped it would say the PDF is corrupt, after
    ~500 MB), and the gateway's peak resident memory grew by less than 100 MB while the turn ran."""
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    from files_helpers import Fetches
    from test_content_pdf_text import workers_running

    data = tounicode_pdf("Minutes of the board")
    assert len(data) < 100_000
    ref, fetches = ReferencePlatform(), Fetches()
    pdf = fetches.attachment("document", data, filename="glyphs.pdf", mime="application/pdf")
    config = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
              "media": {"directory": str(tmp_path / "media"), "pdf_memory_mb": CAP_MB}}
    async with TestGateway(config, ref):
        before = status_kb("VmRSS")
        reset_peak()
        await ref.say("1", "what is this?", attachments=[pdf])
        grew_mb = (status_kb("VmHWM") - before) / 1024
    [reply] = ref.chat("1").screen
    line, _, answer = reply.partition("\n\n")
    assert line == "📎 glyphs.pdf: read only 1 of its 2 pages: the reader stopped (too much memory?)", reply
    assert 'a document glyphs.pdf (PDF, 2 pages) that begins "Minutes of the board' in answer, answer
    assert grew_mb < 100, f"the gateway grew by {grew_mb:.0f} MB"
    assert workers_running() == []
