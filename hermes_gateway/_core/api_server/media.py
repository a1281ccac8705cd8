"""A reply's media on the OpenAI-compatible API: short-lived links, Markdown, and Responses output items.

An API client has no chat to upload into, so each media item of a turn
becomes a URL the client can fetch:

* a file in the media directory gets an unguessable, short-lived link on
  the gateway, ``/v1/media/{token}`` (``media.url_ttl`` seconds, 600 by
  default; 404 afterwards, as for a token that never existed) — or, when it
  is at most ``media.inline_max_bytes``, a ``data:`` URL with its bytes;
* a link a tool returned stays that link;
* an item refused by the media directory is its one-line fallback.

Chat Completions gets them as Markdown after the reply's text (``![caption](url)``
for images, ``[name](url)`` otherwise), streamed as one last content chunk;
the Responses API gets the same text with a ``url_citation`` annotation per
link, plus an ``image_generation_call`` output item (base64 ``result``) per
image small enough to inline — both are types the official SDK parses.

The link's token is 256 random bits. The registry is keyed by the token's
SHA-256, so the time a lookup takes can tell an attacker about hashes at
most, never about a valid token's characters.

With several workers (``api_server.workers``) the link may be fetched from
any of them, so the registry cannot live in one process: :meth:`MediaLinks.share`
switches to tokens that carry the link themselves (the file's path relative
to the media directory, its type, name and expiry, base64url) sealed with an
HMAC-SHA256 under a key the workers' parent drew at start and handed to each
worker (never written anywhere). A forged, altered or expired token is a 404
like an unknown one, and a path outside the media directory is never served.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from aiohttp import web

from ..config import MediaConfig
from ..http.errors import ApiError
from ..media import Media
from ..media_dir import MediaDirectory

log = logging.getLogger(__name__)

ROUTE = "/v1/media/{token}"
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # secrets.token_urlsafe(32)
_SEALED = re.compile(r"^[A-Za-z0-9_-]+$")  # each half of a shared (several workers) token


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
#: Types a browser may show in place; anything else is served as a download.
_INLINE_TYPES = re.compile(r"^(image/(png|jpeg|gif|webp|bmp)|audio/[\w.+-]+|video/[\w.+-]+|application/pdf)$")
_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp", "image/gif": "gif"}


@dataclass
class _Link:
    path: str
    mime: str
    filename: str
    expires_at: float


class MediaLinks:
    """The registry behind ``/v1/media/{token}``: which file a token serves, until when."""

    def __init__(self, config: MediaConfig, *, max_links: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.directory = MediaDirectory(config.path())
        self.ttl = config.url_ttl
        self.inline_max_bytes = config.inline_max_bytes
        self.max_links = max_links
        self.clock = clock
        self._links: dict[bytes, _Link] = {}
        self._key: bytes | None = None  # set by share(): self-contained tokens any worker can verify

    def share(self, key: bytes) -> None:
        """Issue tokens every process holding ``key`` can serve (several workers; see the module docstring).

        The clock must be one all of them share: ``time.monotonic`` is the machine's, the same in every process.
        """
        if len(key) < 32:
            raise ValueError("the media link key must have at least 256 bits")
        self._key = key

    def add(self, media: Media) -> str:
        """A new token for ``media`` (a file in the media directory), valid for ``ttl`` seconds."""
        assert media.path is not None
        if self._key is not None:
            return self._sealed(media)
        self._purge()
        token = secrets.token_urlsafe(32)
        self._links[_key(token)] = _Link(media.path, media.mime, media.filename, self.clock() + self.ttl)
        return token

    def _sealed(self, media: Media) -> str:
        assert media.path is not None and self._key is not None
        relative = os.path.relpath(os.path.realpath(media.path), self.directory.root)
        payload = json.dumps([relative, media.mime, media.filename, round(self.clock() + self.ttl, 3)],
                             separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def _mac(self, payload: bytes) -> bytes:
        assert self._key is not None
        return hmac.new(self._key, b"hermes media link\0" + payload, hashlib.sha256).digest()[:24]

    def _unsealed(self, token: str) -> _Link | None:
        body, _, mac = token.partition(".")
        if not _SEALED.match(body) or not _SEALED.match(mac) or len(token) > 4096:
            return None
        try:
            payload, seal = _unb64(body), _unb64(mac)
        except ValueError:
            return None
        if not hmac.compare_digest(seal, self._mac(payload)):
            return None
        relative, mime, filename, expires_at = json.loads(payload)  # ours: the seal proves it
        if self.clock() >= expires_at:
            return None
        return _Link(os.path.join(self.directory.root, relative), mime, filename, expires_at)

    def get(self, token: str) -> _Link | None:
        """The live link for ``token`` (None: malformed, unknown or expired — they look the same)."""
        if self._key is not None:
            return self._unsealed(token)
        if not _TOKEN.match(token):
            return None
        key = _key(token)
        link = self._links.get(key)
        if link is None:
            return None
        if self.clock() >= link.expires_at:
            del self._links[key]
            return None
        return link

    def _purge(self) -> None:
        now = self.clock()
        for key in [k for k, link in self._links.items() if now >= link.expires_at]:
            del self._links[key]
        while len(self._links) >= self.max_links:  # the oldest link goes first
            del self._links[next(iter(self._links))]

    async def serve(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/media/{token}``: the file, or 404 (unknown, expired, or no longer in the media directory).

        No API key is asked: the token is the key (a browser showing a
        Markdown image sends none). Served with ``nosniff`` and a sandboxing
        CSP; types a browser could run (SVG, HTML) are downloads.
        """
        link = self.get(request.match_info.get("token", ""))
        if link is None or not self.directory.contains(link.path):
            raise ApiError(404, "No such media (the link is unknown or has expired).", code="media_not_found")
        remaining = max(0, int(link.expires_at - self.clock()))
        disposition = "inline" if _INLINE_TYPES.match(link.mime) else "attachment"
        headers = {
            "Content-Type": link.mime if disposition == "inline" else "application/octet-stream",
            "Content-Disposition": f"{disposition}; filename*=UTF-8''{_quote(link.filename)}",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "Cache-Control": f"private, max-age={remaining}",
            "Referrer-Policy": "no-referrer",
        }
        return web.FileResponse(link.path, headers=headers)


@dataclass
class RenderedMedia:
    """A turn's media as the API shows it: Markdown lines, and what the Responses API adds."""

    lines: list[str] = field(default_factory=list)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (line, url, title) per linked item
    images: list[dict[str, Any]] = field(default_factory=list)        # image_generation_call output items

    def tail(self, text: str) -> str:
        """What follows the reply's ``text``: a blank line, then one line per item."""
        if not self.lines:
            return ""
        return ("\n\n" if text else "") + "\n".join(self.lines)

    def annotations(self, text: str) -> list[dict[str, Any]]:
        """``url_citation`` annotations for the links in ``text`` (the reply plus :meth:`tail`)."""
        found: list[dict[str, Any]] = []
        start = 0
        for line, url, title in self.links:
            at = text.find(line, start)
            if at < 0:
                continue
            found.append({"type": "url_citation", "start_index": at, "end_index": at + len(line),
                          "url": url, "title": title})
            start = at + len(line)
        return found


_HOST = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def link_base(request: Any, public_url: str | None) -> str:
    """Where this client fetches media links: ``media.public_url``, else this server as the client reached it.

    The ``Host`` header is the client's to write: one that does not parse
    as a host and port (``::1``, ``localhost:abc``, ``[::1]:99999``) must
    not cost the reply it arrives with (the model already ran). Then the
    links point at the address the connection was accepted on, which this
    client can reach.
    """
    if public_url:
        return public_url
    host = request.headers.get("Host", "")
    if _HOST.fullmatch(host):
        try:
            origin = request.url.origin()
            if origin.port is None or 0 < origin.port < 65536:
                return str(origin)
        except ValueError:
            pass
    sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
    if not sockname:
        return f"{request.scheme}://127.0.0.1"
    address, port = sockname[0], sockname[1]
    address = f"[{address}]" if ":" in address else address
    return f"{request.scheme}://{address}:{port}"


async def render_media(items: Sequence[Media], links: MediaLinks, base_url: str) -> RenderedMedia:
    """Each item as a Markdown line with a URL the client can fetch (file checks and reads in a thread)."""
    if not items:
        return RenderedMedia()
    return await asyncio.to_thread(_render, items, links, base_url)


def _render(items: Sequence[Media], links: MediaLinks, base_url: str) -> RenderedMedia:
    out = RenderedMedia()
    for item in items:
        url = _url_for(item, links, base_url)
        if url is None:
            out.lines.append(item.fallback_line())
            continue
        label = _escape(item.caption.strip().splitlines()[0] if item.caption.strip() else item.filename)
        target = f"<{url}>" if any(c in url for c in " ()<>") else url
        line = f"![{label}]({target})" if item.kind == "image" else f"[{label}]({target})"
        out.lines.append(line)
        out.links.append((line, url, item.filename))
        if item.kind == "image" and url.startswith("data:") and item.mime in _FORMATS:
            out.images.append({"id": f"ig_{uuid.uuid4().hex}", "type": "image_generation_call",
                               "status": "completed", "output_format": _FORMATS[item.mime],
                               "result": url.split(",", 1)[1]})
    return out


def _url_for(item: Media, links: MediaLinks, base_url: str) -> str | None:
    if item.refused:
        return None
    if item.path is None:
        return item.url
    if not links.directory.contains(item.path):
        log.warning("media %r not linked: outside the media directory", item.filename)
        return None
    size = item.size if item.size is not None else 0
    if links.inline_max_bytes and size <= links.inline_max_bytes:
        with open(item.path, "rb") as f:
            data = f.read(links.inline_max_bytes + 1)
        if len(data) <= links.inline_max_bytes:
            return f"data:{item.mime};base64,{base64.b64encode(data).decode('ascii')}"
    return base_url.rstrip("/") + ROUTE.format(token=links.add(item))


def _key(token: str) -> bytes:
    return hashlib.sha256(token.encode("ascii")).digest()


def _escape(label: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", label)


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")
