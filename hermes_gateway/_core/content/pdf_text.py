"""A PDF's text, read by a child process within a time, page and memory budget, ended at once at stop.

pypdf is pure Python and cannot be interrupted: one page of 100,000 tiny
text operators costs seconds and yields nothing, a large ToUnicode map
hundreds of MB. So the PDF is read by :mod:`.pdf_worker`, started with
this Python, which streams each page's text back as it goes and stops on
its own at ``media.document_max_chars`` characters, ``media.pdf_max_pages``
pages or ``media.pdf_empty_pages`` pages in a row without text; its
address space is capped at ``media.pdf_memory_mb``. This side kills it
when it has not opened the PDF within ``media.pdf_timeout`` seconds, or
not read its pages within as many again (a loaded machine's slow start
does not eat the pages' time), or when the turn is cancelled (``/stop``,
the gateway stopping): what was read by then is kept, and the person is
told in one line that only part of the document was read. The worker
also exits when its stdin closes, so it never outlives the gateway. At
most ``media.max_concurrent_decodes`` workers run at once (default: one
per core), so PDFs in many chats at once cost that many workers' memory;
the others wait, and their budget starts when their worker does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .document_text import DocumentError, DocumentText
from .image_parts import default_decodes

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("pdf_worker.py")


@dataclass(frozen=True)
class PdfBudget:
    """``media.pdf_timeout`` / ``pdf_max_pages`` / ``pdf_empty_pages`` / ``pdf_memory_mb``: what one PDF may cost."""

    seconds: float = 30.0
    pages: int = 200
    empty_pages: int = 20
    memory_mb: int = 512
    at_once: int | None = None  # workers running at once in the process (``media.max_concurrent_decodes``)


_running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[int, asyncio.Semaphore]] = \
    weakref.WeakKeyDictionary()


def _slots(at_once: int | None) -> asyncio.Semaphore:
    """The running loop's bound on workers at once (a new one when the configured number changes)."""
    size = at_once or default_decodes()
    loop = asyncio.get_running_loop()
    held = _running.get(loop)
    if held is None or held[0] != size:
        held = _running[loop] = (size, asyncio.Semaphore(size))
    return held[1]


def _pages(n: int) -> str:
    return f"{n} page{'s' if n != 1 else ''}"


async def pdf_text(path: str | Path, name: str, max_chars: int, budget: PdfBudget) -> DocumentText:
    """The PDF's text (see the module's docstring); :class:`DocumentError` when it gives none."""
    async with _slots(budget.at_once):
        return await _read(path, name, max_chars, budget)


async def _read(path: str | Path, name: str, max_chars: int, budget: PdfBudget) -> DocumentText:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(WORKER), str(path), str(max_chars), str(budget.pages), str(budget.empty_pages),
        str(budget.memory_mb * 1024 * 1024), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, limit=8 * max_chars + 65536)
    assert proc.stdout is not None
    chunks: list[str] = []
    total: int | None = None
    read = 0
    unreadable: list[int] = []  # pages pypdf failed on alone (the others were read)
    end: str | None = None
    try:
        async with asyncio.timeout(budget.seconds) as window:
            while end is None and (line := await proc.stdout.readline()):
                message: dict[str, Any] = json.loads(line)
                if "pages" in message:  # opened (its start and the PDF's header within the budget): the
                    total = int(message["pages"])  # pages get a whole budget of their own
                    window.reschedule(asyncio.get_running_loop().time() + budget.seconds)
                elif "page" in message:
                    read += 1
                    if message.get("unreadable"):
                        unreadable.append(int(message["page"]))
                    if message.get("text"):
                        chunks.append(str(message["text"]))
                elif "end" in message:
                    end = str(message["end"])
                elif message.get("error") == "memory" and chunks:  # out of memory later on: keep the start
                    end = "died"
                elif message.get("error") == "corrupt" and read:  # its page tree broke later on: keep the start
                    log.info("a PDF could not be read past page %d: %s", read, str(message.get("detail", "")))
                    end = "corrupt"
                elif "error" in message:
                    _refuse(str(message["error"]), str(message.get("detail", "")))
        if end is None:  # it died without a word: killed by the memory cap, or crashed
            end = "died"
    except TimeoutError:
        end = "time"
    except (ValueError, asyncio.LimitOverrunError) as exc:  # a line that is not what the worker writes
        log.warning("the PDF reader's output could not be read: %s", type(exc).__name__)
        end = "died"
    finally:
        if proc.returncode is None:
            try:
                proc.kill()  # at its budget, its end, a /stop or the gateway stopping: it goes now
            except ProcessLookupError:
                pass
        await asyncio.shield(proc.wait())
    return _result(name, max_chars, chunks, total, read, end, budget, unreadable)


def _refuse(error: str, detail: str) -> None:
    if error == "password":
        raise DocumentError("the PDF is protected by a password")
    if error == "missing":  # a dependency of the gateway; only a broken install lacks it
        raise DocumentError("PDFs cannot be read here (pypdf is not installed)")
    if error == "memory":
        raise DocumentError("the PDF needs more memory to read than it may have")
    log.info("a PDF could not be read: %s", detail)
    raise DocumentError("not a PDF I can read (corrupt?)")


def _numbers(pages: list[int]) -> str:
    """``[1]`` → "page 2"; ``[1, 4]`` → "pages 2 and 5"; more than three → "4 pages"."""
    shown = [str(n + 1) for n in pages]
    if len(shown) == 1:
        return f"page {shown[0]}"
    if len(shown) <= 3:
        return f"pages {', '.join(shown[:-1])} and {shown[-1]}"
    return _pages(len(shown))


def _result(name: str, max_chars: int, chunks: list[str], total: int | None, read: int, end: str,
            budget: PdfBudget, unreadable: list[int]) -> DocumentText:
    text = "\n\n".join(chunks)
    if end == "died" and total is None:
        raise DocumentError("the PDF needs more memory to read than it may have, or is corrupt")
    stopped = {"time": f"reading it took too long (over {budget.seconds:g} s)",
               "pages": f"it has more than {_pages(budget.pages)}",
               "empty": f"{_pages(budget.empty_pages)} in a row had no text",
               "died": "the reader stopped (too much memory?)",
               "corrupt": "the rest of it is corrupt"}.get(end)
    if not text.strip() and (end == "corrupt" or (unreadable and len(unreadable) == read)):
        raise DocumentError("not a PDF I can read (corrupt?)")
    if not text.strip():
        if end == "time":
            raise DocumentError(f"no text in the first {budget.seconds:g} s of reading it (it is too slow to read)")
        if end == "died":
            raise DocumentError("the PDF needs more memory to read than it may have, or is corrupt")
        raise DocumentError("the PDF has no text I can read (a scan? only images)")
    cut = end != "done" or len(text) > max_chars
    text = text[:max_chars]
    part = f"{read} of its {total} pages" if total is not None else _pages(read)
    notes = [f"read only {part}: {stopped}"] if stopped else []
    if unreadable:
        notes.append(f"{_numbers(unreadable)} could not be read (corrupt?)")
    line = "; ".join(notes) or None
    kind = f"PDF, {_pages(total)}" if total is not None else "PDF"
    return DocumentText(name, kind, text, cut, line)
