"""PDFs as text, read by a worker process within a time, page and empty-page budget; ended when cancelled."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from hermes_gateway._core.content.document_text import DocumentError
from hermes_gateway._core.content.pdf_text import WORKER, PdfBudget, pdf_text

from files_helpers import pdf_bytes, slow_pdf


def write(tmp_path: Path, data: bytes, name: str = "doc.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def workers_running() -> list[int]:
    """This process's children that are PDF workers (read from /proc: no dependency)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:  # a thread that ended since the listing (the executor's, the loop's)
            continue
        for child in children:
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if str(WORKER).encode() in cmdline:
                found.append(int(child))
    return found


async def test_a_pdf_becomes_its_text_page_by_page(tmp_path: Path) -> None:
    path = write(tmp_path, pdf_bytes("Quarterly report: revenue grew", "Second page"))
    doc = await pdf_text(path, "r.pdf", 20_000, PdfBudget())
    assert doc.text == "Quarterly report: revenue grew\n\nSecond page" and not doc.cut and doc.line is None
    assert doc.prompt().startswith("[document: r.pdf (PDF, 2 pages)]\nQuarterly report")


async def test_a_long_pdf_stops_reading_pages_at_the_character_bound(tmp_path: Path) -> None:
    path = write(tmp_path, pdf_bytes(*[f"page {i} " + "x" * 80 for i in range(50)]))
    doc = await pdf_text(path, "long.pdf", 300, PdfBudget())
    assert len(doc.text) == 300 and doc.cut and doc.text.startswith("page 0 ") and doc.line is None


@pytest.mark.parametrize("data,why", [(b"%PDF-1.4 garbage", "not a PDF I can read"),
                                      (pdf_bytes(""), "no text I can read")])
async def test_a_broken_or_textless_pdf_is_a_reason(tmp_path: Path, data: bytes, why: str) -> None:
    with pytest.raises(DocumentError, match=why):
        await pdf_text(write(tmp_path, data), "s.pdf", 1000, PdfBudget())


def pdf_with_a_broken_page(filter_name: str) -> bytes:
    """Three pages; the second's content stream is encoded with ``filter_name`` and holds garbage for it."""
    from hermes_gateway.testing.samples import pdf_file

    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R 6 0 R 8 0 R] /Count 3 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(["Minutes of the board", "(never read)", "Decisions: none"]):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>".encode())
        content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        if i == 1:
            content = b"0123456789"
            objects.append(b"<< /Length 10 /Filter /%s >>\nstream\n%s\nendstream" % (filter_name.encode(), content))
        else:
            objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return pdf_file(objects)


async def test_a_page_pypdf_cannot_read_costs_that_page_and_one_line_not_the_document(tmp_path: Path) -> None:
    """pypdf raised on the second page's unknown filter, and the whole PDF was "not a PDF I can read" although its
    other pages read fine."""
    doc = await pdf_text(write(tmp_path, pdf_with_a_broken_page("Bogus")), "m.pdf", 20_000, PdfBudget())
    assert doc.text == "Minutes of the board\n\nDecisions: none" and not doc.cut
    assert doc.line == "page 2 could not be read (corrupt?)"
    assert doc.prompt().endswith("Decisions: none\n[page 2 could not be read (corrupt?)]\n[end of m.pdf]")


async def test_the_person_sees_one_line_for_the_unreadable_page_and_an_answer_from_the_rest(tmp_path: Path) -> None:
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    from files_helpers import Fetches

    ref, fetches = ReferencePlatform(), Fetches()
    pdf = fetches.attachment("document", pdf_with_a_broken_page("Bogus"), filename="minutes.pdf",
                             mime="application/pdf")
    config = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
              "media": {"directory": str(tmp_path / "media")}}
    async with TestGateway(config, ref):
        await ref.say("1", "what is this?", attachments=[pdf])
    [reply] = ref.chat("1").screen
    line, _, answer = reply.partition("\n\n")
    assert line == "📎 minutes.pdf: page 2 could not be read (corrupt?)"
    assert 'a document minutes.pdf (PDF, 3 pages) that begins "Minutes of the board' in answer, answer


async def test_a_pdf_whose_every_page_is_unreadable_is_one_reason(tmp_path: Path) -> None:
    from hermes_gateway.testing.samples import pdf_file

    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length 10 /Filter /Bogus >>\nstream\n0123456789\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    with pytest.raises(DocumentError, match="not a PDF I can read"):
        await pdf_text(write(tmp_path, pdf_file(objects)), "x.pdf", 1000, PdfBudget())


async def test_no_other_program_ever_reads_the_pdf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pypdf runs ``jbig2dec`` on a /JBIG2Decode stream when one is on the PATH: a stranger's file must not reach
    it. A ``jbig2dec`` that leaves a mark when run is on the PATH; the page is unreadable and nothing ran."""
    bin_dir, mark = tmp_path / "bin", tmp_path / "jbig2dec-ran"
    bin_dir.mkdir()
    program = bin_dir / "jbig2dec"
    program.write_text(f"#!/bin/sh\ntouch '{mark}'\necho 'jbig2dec 0.20'\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    doc = await pdf_text(write(tmp_path, pdf_with_a_broken_page("JBIG2Decode")), "j.pdf", 20_000, PdfBudget())
    assert doc.text == "Minutes of the board\n\nDecisions: none" and doc.line == "page 2 could not be read (corrupt?)"
    assert not mark.exists()


async def test_a_slow_pdf_stops_at_its_time_budget_keeping_what_was_read(tmp_path: Path) -> None:
    """Page 0 has a line; every later page costs pypdf seconds for nothing: reading ends at the budget, the
    text read so far is kept, the person is told why in one line, and the worker is gone."""
    path = write(tmp_path, slow_pdf(40, text_on={0: "The summary comes first"}))
    doc = await pdf_text(path, "slow.pdf", 20_000, PdfBudget(seconds=2))
    assert doc.text == "The summary comes first" and doc.cut
    assert re.fullmatch(r"read only \d of its 40 pages: reading it took too long \(over 2 s\)", doc.line or ""), doc.line
    assert doc.prompt().endswith(f"The summary comes first\n[cut here: {doc.line}]\n[end of slow.pdf]")
    assert workers_running() == []


async def test_a_slow_pdf_without_text_in_its_budget_is_one_reason(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"no text in the first 1 s of reading it \(it is too slow to read\)"):
        await pdf_text(write(tmp_path, slow_pdf(40)), "slow.pdf", 20_000, PdfBudget(seconds=1))
    assert workers_running() == []


async def test_pages_past_the_page_budget_are_not_read(tmp_path: Path) -> None:
    path = write(tmp_path, pdf_bytes(*[f"page {i}" for i in range(10)]))
    doc = await pdf_text(path, "ten.pdf", 20_000, PdfBudget(pages=3))
    assert doc.text == "page 0\n\npage 1\n\npage 2" and doc.cut
    assert doc.line == "read only 3 of its 10 pages: it has more than 3 pages"


async def test_reading_stops_after_pages_in_a_row_without_text(tmp_path: Path) -> None:
    """A scan with one typed page, then hundreds of image pages: it stops after media.pdf_empty_pages."""
    pages = ["Cover letter"] + [""] * 200 + ["never reached"]
    doc = await pdf_text(write(tmp_path, pdf_bytes(*pages)), "scan.pdf", 20_000, PdfBudget(empty_pages=5))
    assert doc.text == "Cover letter"
    assert doc.line == "read only 6 of its 202 pages: 5 pages in a row had no text"
    with pytest.raises(DocumentError, match="no text I can read"):
        await pdf_text(write(tmp_path, pdf_bytes(*[""] * 50 + ["late"])), "s.pdf", 20_000, PdfBudget(empty_pages=5))


async def test_a_cancelled_read_ends_its_worker_at_once(tmp_path: Path) -> None:
    """/stop or the gateway stopping cancels the turn: the worker is killed, not left to finish its pages. While
    it ran, its address space was capped (RLIMIT_AS, media.pdf_memory_mb: 512 MiB by default)."""
    task = asyncio.ensure_future(pdf_text(write(tmp_path, slow_pdf(40)), "slow.pdf", 20_000, PdfBudget()))
    for _ in range(500):  # until the worker runs (bounded poll)
        if workers_running():
            break
        await asyncio.sleep(0.02)
    [pid] = workers_running()
    for _ in range(500):  # the worker sets its cap as it starts (bounded poll)
        limits = Path(f"/proc/{pid}/limits").read_text()
        [address_space] = [line for line in limits.splitlines() if line.startswith("Max address space")]
        if "unlimited" not in address_space:
            break
        await asyncio.sleep(0.01)
    assert address_space.split()[3:5] == [str(512 * 1024 * 1024)] * 2, "media.pdf_memory_mb caps the worker"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert workers_running() == [] and not Path(f"/proc/{pid}").exists()


async def test_at_most_the_configured_number_of_workers_run_at_once(tmp_path: Path) -> None:
    """Two chats send a slow PDF at once, media.max_concurrent_decodes: 1: one worker at a time (each holds
    up to media.pdf_memory_mb); each PDF still gets its whole budget once its worker starts."""
    budget = PdfBudget(seconds=2, at_once=1)
    reads = [asyncio.ensure_future(pdf_text(write(tmp_path, slow_pdf(40, text_on={0: f"doc {n}"}), f"{n}.pdf"),
                                            f"{n}.pdf", 20_000, budget)) for n in range(2)]
    most = 0
    while not all(r.done() for r in reads):
        most = max(most, len(workers_running()))
        await asyncio.sleep(0.01)
    assert most == 1
    assert [r.result().text for r in reads] == ["doc 0", "doc 1"]
    assert all("reading it took too long (over 2 s)" in (r.result().line or "") for r in reads)


async def test_a_slow_pdf_costs_one_line_and_the_message_is_still_answered(tmp_path: Path) -> None:
    """Through the reference platform: the caption and the text read before the budget are answered, after one
    line saying the document was read only in part."""
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    from files_helpers import Fetches

    ref, fetches = ReferencePlatform(), Fetches()
    pdf = fetches.attachment("document", slow_pdf(40, text_on={0: "Minutes of the board"}), filename="minutes.pdf",
                             mime="application/pdf")
    config = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
              "media": {"directory": str(tmp_path / "media"), "pdf_timeout": 2}}
    async with TestGateway(config, ref):
        await ref.say("1", "what is this?", attachments=[pdf])
    [reply] = ref.chat("1").screen
    line, _, answer = reply.partition("\n\n")
    assert re.fullmatch(r"📎 minutes.pdf: read only \d of its 40 pages: reading it took too long \(over 2 s\)", line)
    assert 'a document minutes.pdf (PDF, 40 pages) that begins "Minutes of the board' in answer, answer
    assert workers_running() == []


GRACE = 1.0


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out += children
            todo += children
    return out


def is_worker(pid: int) -> bool:
    try:
        return str(WORKER).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="the worker is found in /proc")
async def test_sigterm_while_a_slow_pdf_is_read_exits_within_grace_plus_5_s(tmp_path: Path) -> None:
    """`hermes-gateway run`, a slow PDF uploaded in the web chat (40 pages of ~4 s of pypdf each), SIGTERM
    while it is read: the process exits 0 within conversation.shutdown_grace + 5 s, and its worker is gone."""
    import signal
    import sys

    import aiohttp
    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "api_server": {"port": 0}, "store": {"path": str(tmp_path / "s.db")},
        "conversation": {"shutdown_grace": GRACE},
        "media": {"directory": str(tmp_path / "media"), "pdf_timeout": 600}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path), HERMES_HOME=str(tmp_path / ".hermes"), HERMES_LOAD_PLUGINS="",
               PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(config), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        found = re.search(r"listening on (http://\S+) ", line)
        assert found, line
        url = found.group(1)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(f"{url}/ui/api/session") as r:
                csrf = (await r.json())["csrf"]
            form = aiohttp.FormData(default_to_multipart=True)
            form.add_field("text", "summarise this")
            form.add_field("file", slow_pdf(40), filename="slow.pdf", content_type="application/pdf")
            async with browser.post(f"{url}/ui/api/chat/upload", data=form, headers={"X-CSRF-Token": csrf}) as r:
                assert r.status == 202, await r.text()
        workers: list[int] = []
        for _ in range(1000):  # until the PDF is being read (bounded poll: 20 s)
            workers = [pid for pid in descendants(proc.pid) if is_worker(pid)]
            if workers:
                break
            await asyncio.sleep(0.02)
        assert workers, "the PDF is read by a worker process"
        loop = asyncio.get_running_loop()
        started = loop.time()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 120)
        took = loop.time() - started
        assert took <= GRACE + 5, f"stopping took {took:.1f} s"
        assert code == 0 and "Traceback" not in (await proc.stderr.read()).decode()
        assert not any(Path(f"/proc/{pid}").exists() and is_worker(pid) for pid in workers)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
