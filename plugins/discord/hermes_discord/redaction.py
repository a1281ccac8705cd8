"""Keep the bot token out of logs and error messages.

The token travels in every REST call's ``Authorization`` header and in the
gateway's IDENTIFY; discord.py logs request bodies and gateway payloads at
DEBUG, and an error text or a traceback could quote it. Once a token is
known, every log record the process creates is rewritten without it (a
log record factory: it covers discord.py's loggers, however deep and
however late they are created, aiohttp's, asyncio's "exception never
retrieved" and our own), and :func:`scrub` does the same for exception text.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

MASK = "<discord-token>"

_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None
_installed = False


def scrub(text: str) -> str:
    """``text`` with every known token (and its secret last part) replaced by a mask."""
    if _pattern is None:
        return text
    return _pattern.sub(MASK, text)


def redact(record: logging.LogRecord) -> logging.LogRecord:
    """The record, its message (and traceback text) without any known token."""
    if _pattern is None:
        return record
    try:
        message = record.getMessage()
    except Exception:  # a broken record is logging's problem, not ours
        return record
    clean = scrub(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = scrub(record.exc_text)
    return record


def _install() -> None:
    """Wrap the current log record factory once (keeping whatever it does)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact(previous(*args, **kwargs))

    logging.setLogRecordFactory(factory)
    _installed = True


def protect(token: str) -> None:
    """Register ``token`` as a secret; from now on no log record carries it."""
    global _pattern
    with _lock:
        _secrets.add(token)
        secret_part = token.rsplit(".", 1)[-1]
        if len(secret_part) >= 16:
            _secrets.add(secret_part)
        alternatives = "|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(alternatives)
        _install()
