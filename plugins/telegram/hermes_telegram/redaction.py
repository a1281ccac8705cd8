"""Keep the bot token out of logs and error messages.

The Bot API puts the token in every URL (``/bot<token>/sendMessage``), so
httpx logs it at INFO on every request, python-telegram-bot logs it at
DEBUG when a ``Bot`` is built, and its ``InvalidToken`` error quotes it.
Anyone who can read the gateway's log could then drive the bot. A filter
on those loggers rewrites every record that mentions a known token, and
:func:`scrub` does the same for text we put into exceptions.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "<telegram-token>"

#: Loggers that see Bot API URLs or token-bearing messages. Filters on a logger only see
#: records created on that very logger, so each one is named, not just the parents.
LOGGERS = ("httpx", "httpcore", "httpcore.connection", "httpcore.http11", "telegram", "telegram.Bot",
           "telegram.ext.ExtBot", "telegram.request.BaseRequest", "telegram.request.HTTPXRequest",
           "hermes_telegram", "hermes_telegram.plugin", "hermes_telegram.polling")

_secrets: set[str] = set()
_lock = threading.Lock()


_pattern: re.Pattern[str] | None = None


def scrub(text: str) -> str:
    """``text`` with every known token (and its secret half) replaced by a mask.

    Case-insensitive: python-telegram-bot capitalizes error descriptions
    (``str.capitalize`` lowercases the rest), so a token echoed in an error
    arrives in lower case.
    """
    if _pattern is None:
        return text
    return _pattern.sub(MASK, text)


class RedactTokens(logging.Filter):
    """Rewrites a record's message (and its traceback text) without any known token."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:
            return True
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


_FILTER = RedactTokens()


def protect(token: str) -> None:
    """Register ``token`` as a secret and make sure the filters are installed."""
    global _pattern
    with _lock:
        _secrets.add(token)
        _, _, secret_half = token.partition(":")
        if len(secret_half) >= 8:
            _secrets.add(secret_half)
        alternatives = "|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(alternatives, re.IGNORECASE)
        for name in LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
