"""Keep secrets (bot tokens, API keys, signing secrets) out of every log line and error text.

A platform SDK may log a URL with the token in it, a request's headers, or
quote the token in an error; anyone who can read the gateway's log could
then drive the bot. Once a secret is registered with :func:`protect`, every
log record the process creates is rewritten without it — through a log
record factory, so it covers every logger (an SDK's, however deep and
however late it is created, aiohttp's, asyncio's "exception never
retrieved", ours) — and :func:`scrub` does the same for text put into
exceptions. One mechanism for the core and every plugin.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from .masking import mask_urls_in_text

#: What a secret becomes when no mask is given.
MASK = "<secret>"
#: Shorter strings are not secrets worth masking (and would mangle ordinary text).
MIN_LENGTH = 8

_masks: dict[str, str] = {}   # lower-cased secret -> its mask
_shapes: list[tuple[re.Pattern[str], str]] = []  # what any secret of a kind looks like, known or not
_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None
_installed = False


def protect(*secrets: str | None, mask: str = MASK) -> None:
    """Register secrets: from now on no log record and no :func:`scrub` output carries them.

    Matching ignores case: some SDKs capitalise error descriptions, which
    lower-cases a token quoted inside them. A secret registered again with
    another ``mask`` is shown as that one from then on (a plugin naming its
    token after the core registered it as a settings secret).
    """
    with _lock:
        added = False
        for secret in secrets:
            if secret and len(secret) >= MIN_LENGTH and _masks.get(secret.lower()) != mask:
                if secret.lower() in _masks and mask == MASK:
                    continue  # the generic mask never replaces a named one
                _masks[secret.lower()] = mask
                added = True
        if added:
            _compile()


def protect_shape(shape: str, mask: str = MASK) -> None:
    """Mask anything matching the regular expression ``shape`` (Slack's ``xox…`` tokens), known or not."""
    with _lock:
        if all(existing.pattern != shape for existing, _ in _shapes):
            _shapes.append((re.compile(shape), mask))
            _compile()


def _compile() -> None:
    global _pattern
    alternatives = [re.escape(s) for s in sorted(_masks, key=len, reverse=True)]
    alternatives += [f"(?:{shape.pattern})" for shape, _ in _shapes]
    _pattern = re.compile("|".join(alternatives), re.IGNORECASE)
    _install()


def _mask_for(found: str) -> str:
    mask = _masks.get(found.lower())
    if mask is not None:
        return mask
    return next((mask for shape, mask in _shapes if shape.fullmatch(found)), MASK)


def scrub(text: str) -> str:
    """``text`` with every registered secret replaced by its mask, and credentials inside URLs masked."""
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(lambda m: _mask_for(m.group(0)), text)
    if "@" in text and "://" in text:  # https://user:sk-…@host/v1: httpx logs such URLs at -v
        text = mask_urls_in_text(text)
    return text


def redact(record: logging.LogRecord) -> logging.LogRecord:
    """The record with its message (and traceback text) scrubbed."""
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


def protect_config(config: Any) -> None:
    """The secrets of the core's own config: the model's and fallbacks' API keys, the API server's keys,
    and (for every log line from now on) credentials written inside a URL such as ``model.base_url``."""
    with _lock:
        _install()
    endpoints = (config.model.endpoint, *config.model.fallback)
    for named in getattr(getattr(config, "operator", None), "models", {}).values():  # models.NAME
        endpoints += (named.endpoint, *named.fallback)
    protect(*(e.api_key for e in endpoints), mask="<api-key>")
    protect(*config.api_server.api_keys, mask="<api-key>")
    web = getattr(config, "web", None)
    if web is not None and web.password:
        protect(web.password, mask="<password>")
    voice = getattr(config, "voice", None)
    if voice is not None:
        protect(*(e.api_key for e in (voice.transcription, voice.speech) if e.api_key), mask="<api-key>")
    for server in getattr(config, "mcp_servers", ()):  # env values and headers of MCP servers
        protect(*server.secrets())
    protect(*(hook.secret for hook in getattr(config, "hooks", ())), mask="<hook-secret>")
    coordination = getattr(config, "coordination", None)
    if coordination is not None and coordination.url:
        from .masking import url_secrets

        protect(*url_secrets(coordination.url), mask="<password>")
    telemetry = getattr(config, "telemetry", None)
    if telemetry is not None and telemetry.otlp_endpoint:  # a collector's credentials in its URL
        from .masking import url_secrets

        protect(*url_secrets(telemetry.otlp_endpoint), mask="<password>")
