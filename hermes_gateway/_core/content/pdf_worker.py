"""The child process that reads a PDF's text with pypdf, so that the gateway can end it: run, never imported.

``python pdf_worker.py PATH MAX_CHARS MAX_PAGES EMPTY_PAGES MEMORY_BYTES``

pypdf cannot be interrupted: a page of 100,000 tiny text operators costs
seconds, a large ToUnicode map hundreds of MB. In a thread of the
gateway neither could be stopped (SIGTERM waited a minute for it); in
this process the gateway kills it at its time budget or at stop
(:mod:`.pdf_text`), and its address space is capped (``RLIMIT_AS``), so
a PDF's cost stays here. It needs only the standard library and pypdf
(started by file path: the gateway's package is not imported).

It writes one JSON object per line to stdout, each flushed at once, so
the gateway keeps what was read before it was stopped:
``{"pages": N}``, then ``{"page": i, "text": "..."}`` for every page read
("" when it gave nothing; with ``"unreadable": true`` when pypdf failed on
that page alone: a broken content stream or filter costs its page, not the
document), then ``{"end": "done" | "chars" | "pages" | "empty"}`` (why it
stopped: all read; ``MAX_CHARS`` characters; ``MAX_PAGES`` pages;
``EMPTY_PAGES`` pages in a row without text), or
``{"error": "password" | "corrupt" | "memory" | "missing"}`` (after some
pages too: the gateway keeps them). It exits when its stdin closes: the
gateway that started it is gone.

No other program ever sees the file: pypdf decodes a ``/JBIG2Decode``
stream by running ``jbig2dec`` on it when one is installed, so that is
switched off (:func:`_no_external_programs`) and such a stream fails like
any filter pypdf does not have.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _exit_when_orphaned() -> None:
    """The gateway holds our stdin open; EOF means it died (even by SIGKILL): stop at once."""
    try:
        while os.read(0, 4096):  # unbuffered: no lock of sys.stdin held at the interpreter's exit
            pass
    finally:
        os._exit(0)


def _limit_memory(memory: int) -> None:
    if memory <= 0:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):  # not on this system: the time budget still ends it
        pass


def _no_external_programs() -> None:
    """pypdf runs ``jbig2dec`` on a ``/JBIG2Decode`` stream when it finds one: never on a stranger's file."""
    import pypdf

    if hasattr(pypdf, "overwrite_configuration"):  # newer pypdf: its configuration, for this process (changing
        pypdf.overwrite_configuration(jbig2dec_binary=None)  # the old constant there is an error at every read)
        return
    from pypdf import filters

    if hasattr(filters, "JBIG2DEC_BINARY"):  # earlier pypdf read this module constant
        filters.JBIG2DEC_BINARY = None


def read(path: str, max_chars: int, max_pages: int, empty_pages: int) -> None:
    try:
        from pypdf import PdfReader
    except ImportError:
        _emit({"error": "missing"})
        return
    _no_external_programs()
    reader = PdfReader(path)
    if reader.is_encrypted:
        try:
            if not reader.decrypt(""):
                _emit({"error": "password"})
                return
        except Exception:
            _emit({"error": "password"})
            return
    pages = len(reader.pages)
    _emit({"pages": pages})
    total = 0
    empty_run = 0
    for number, page in enumerate(reader.pages):
        if total >= max_chars:
            _emit({"end": "chars"})
            return
        if number >= max_pages:
            _emit({"end": "pages"})
            return
        try:
            text = (page.extract_text() or "").strip()
        except MemoryError:
            raise
        except Exception:  # this page's content stream, font or filter is broken: the next pages may be fine
            _emit({"page": number, "text": "", "unreadable": True})
            text = ""
        else:
            _emit({"page": number, "text": text[:max_chars - total + 1]})
        if text:
            total += len(text) + 2
            empty_run = 0
        else:
            empty_run += 1
            if empty_run >= empty_pages and number + 1 < pages:
                _emit({"end": "empty"})
                return
    _emit({"end": "done"})


def main(argv: list[str]) -> int:
    path, max_chars, max_pages, empty_pages, memory = argv[1], *(int(a) for a in argv[2:6])
    threading.Thread(target=_exit_when_orphaned, daemon=True).start()
    _limit_memory(memory)
    try:
        read(path, max_chars, max_pages, empty_pages)
    except MemoryError:
        _emit({"error": "memory"})
    except Exception as exc:  # pypdf raises many kinds on a broken file: each is "corrupt" to the person
        _emit({"error": "corrupt", "detail": f"{type(exc).__name__}: {exc}"[:300]})
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    os._exit(code)  # not a normal exit: the thread reading stdin would hold it up
