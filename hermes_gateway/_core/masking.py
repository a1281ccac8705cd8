"""Credentials inside URLs (``https://user:sk-…@host/v1?key=…``), masked wherever a URL is shown.

A base_url may carry its credentials (proxies, Azure-style ``?key=``). The
config command, errors, ``repr`` and log lines show it only through
:func:`mask_url`; :mod:`hermes_gateway._core.secrets` does the same for every log record
written by libraries (httpx logs every request URL at INFO).
"""

from __future__ import annotations

import re

#: Query parameters of a base_url whose values are credentials (``?key=``, ``?api_key=``, ``?sig=`` ...).
_SECRET_PARAM = re.compile(r"key|token|secret|sig|pass|auth|cred|session", re.IGNORECASE)
_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?[^/?#@\s]*@")


def mask_url(url: str) -> str:
    """``url`` with credentials masked: the user:password part and secret-looking query values.

    ``https://user:sk-1@host/v1?key=abc&api-version=2`` → ``https://***@host/v1?key=***&api-version=2``.
    Used wherever a base_url is shown: ``config``, errors, logs, ``repr``.
    """
    masked = _USERINFO.sub(lambda m: f"{m.group(1) or ''}***@", url, count=1)
    head, sep, query = masked.partition("?")
    if not sep:
        return masked
    query, hash_sep, fragment = query.partition("#")
    pieces = []
    for piece in query.split("&"):
        name, eq, value = piece.partition("=")
        pieces.append(f"{name}=***" if eq and value and _SECRET_PARAM.search(name) else piece)
    return f"{head}?{'&'.join(pieces)}{hash_sep}{fragment}"


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials inside ``url`` (password, user:password, secret query values), to redact from text."""
    if not url:
        return ()
    found: list[str] = []
    match = _USERINFO.match(url)
    if match:
        userinfo = match.group(0)[len(match.group(1) or ""):-1]
        found += [userinfo, userinfo.partition(":")[2]]
    query = url.partition("?")[2].partition("#")[0]
    for piece in query.split("&"):
        name, eq, value = piece.partition("=")
        if eq and value and _SECRET_PARAM.search(name):
            found.append(value)
    return tuple(s for s in found if len(s) >= 4)


_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")


def mask_urls_in_text(text: str) -> str:
    """``text`` with :func:`mask_url` applied to every URL in it."""
    return _URL_IN_TEXT.sub(lambda m: mask_url(m.group(0)), text)
