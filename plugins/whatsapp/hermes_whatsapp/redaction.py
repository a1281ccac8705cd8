"""Keep the access token, the app secret and the verify token out of logs and error messages.

The token travels only in the ``Authorization`` header and the secret only
feeds the HMAC, so neither should ever be printed; but a Graph API error
text, a proxy's error page or a webhook's query string (the verify token
arrives in one) can echo them. A filter on the plugin's and aiohttp's
loggers rewrites every record that mentions a known secret, and
:func:`scrub` does the same for the text of the exceptions we raise.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "<whatsapp-secret>"

#: Filters on a logger only see records created on that very logger, so each one is named.
LOGGERS = ("hermes_whatsapp", "hermes_whatsapp.plugin", "hermes_whatsapp.graph", "hermes_whatsapp.webhook",
           "hermes_whatsapp.notices", "aiohttp.client", "aiohttp.server", "aiohttp.web", "aiohttp.access",
           "hermes_gateway.delivery.session", "hermes_gateway.inbound.runtime", "hermes_gateway.gateway")

#: Secrets shorter than this are not masked (they would mask ordinary words); settings refuse none.
MIN_SECRET = 8

_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_lock = threading.Lock()


def scrub(text: str) -> str:
    """``text`` with every known secret replaced by :data:`MASK`."""
    if _pattern is None:
        return text
    return _pattern.sub(MASK, text)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message (and its traceback text) without any known secret."""

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


_FILTER = RedactSecrets()


def protect(*secrets: str) -> None:
    """Register ``secrets`` and make sure the filters are installed."""
    global _pattern
    with _lock:
        _secrets.update(s for s in secrets if s and len(s) >= MIN_SECRET)
        if not _secrets:
            return
        alternatives = "|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(alternatives)
        for name in LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
