"""Keep Slack tokens and the signing secret out of logs and error messages.

slack_sdk redacts the Authorization header in its own debug log, but error
texts, bolt's debug dumps of requests and our own messages could still
carry a token: a filter on the loggers that see them rewrites any record
mentioning a known secret (or anything shaped like a Slack token), and
:func:`scrub` does the same for text we put into exceptions.
"""

from __future__ import annotations

import logging
import re
import threading

MASK = "<slack-secret>"
#: Anything shaped like a Slack token, known or not.
TOKEN_SHAPE = r"xox[abposr]-[0-9A-Za-z-]{8,}|xapp-[0-9A-Za-z-]{8,}"

LOGGERS = ("slack_sdk", "slack_sdk.web", "slack_sdk.web.async_base_client", "slack_sdk.socket_mode",
           "slack_sdk.socket_mode.aiohttp", "slack_bolt", "slack_bolt.AsyncApp", "aiohttp.access",
           "aiohttp.client", "aiohttp.server", "hermes_slack", "hermes_slack.plugin", "hermes_slack.inbound",
           "hermes_slack.outbound", "hermes_slack.webhook")

_secrets: set[str] = set()
_lock = threading.Lock()
_pattern = re.compile(TOKEN_SHAPE)


def scrub(text: str) -> str:
    """``text`` with every known secret and every token-shaped string masked."""
    return _pattern.sub(MASK, text)


class RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
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


def protect(*secrets: str | None) -> None:
    """Register secrets and make sure the filters are installed."""
    global _pattern
    with _lock:
        _secrets.update(s for s in secrets if s)
        known = "|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True))
        _pattern = re.compile(f"{known}|{TOKEN_SHAPE}" if known else TOKEN_SHAPE)
        for name in LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
