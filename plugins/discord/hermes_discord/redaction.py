"""Keep the bot token out of logs and error messages.

The token travels in every REST call's ``Authorization`` header and in the
gateway's IDENTIFY; discord.py logs request bodies and gateway payloads at
DEBUG, and an error text or a traceback could quote it. A filter on
discord.py's, aiohttp's and our own loggers rewrites every record that
mentions a known token, and :func:`scrub` does the same for exception text.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "<discord-token>"

#: Filters on a logger only see records created on that very logger, so each one is named.
LOGGERS = ("discord", "discord.client", "discord.http", "discord.gateway", "discord.state", "discord.shard",
           "discord.webhook.async_", "discord.ext", "aiohttp", "aiohttp.client", "aiohttp.access",
           "aiohttp.internal", "aiohttp.websocket", "aiohttp.server", "aiohttp.web",
           "hermes_discord", "hermes_discord.plugin", "hermes_discord.receiving", "hermes_discord.errors",
           "hermes_discord.ratelimit")

_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None


def scrub(text: str) -> str:
    """``text`` with every known token (and its secret last part) replaced by a mask."""
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
        secret_part = token.rsplit(".", 1)[-1]
        if len(secret_part) >= 16:
            _secrets.add(secret_part)
        alternatives = "|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(alternatives)
        for name in LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
