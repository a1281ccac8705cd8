"""``stream_download``: a file a person sent, streamed from its platform in chunks, never more than its cap.

Every platform plugin downloads the files people send the same way: a GET
that streams (aiohttp ``iter_chunked``, at most one chunk held), a refusal
before a byte is read when the ``Content-Length`` is over what the platform
declared for the file or over the plugin's own limit, a running count that
stops a body that runs past either (a lying or absent ``Content-Length``,
a chunked body), and every failure — an HTTP error, a refused or broken
connection, a stall — as one :class:`~hermes_gateway.FetchError` that names
the file and never the URL (file URLs carry signatures or tokens, and
aiohttp's exception texts quote them). It lives here once so that each
plugin keeps only what is its own: where the file is, which token goes
with it, what its platform's status codes mean.

The core checks ``media.inbound_max_bytes`` again while it writes the file;
this guard is the plugin's promise that it never hands over more than the
platform said the file was.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable, Mapping

from ..messages.attachments import FetchError

#: Bytes handed to the core at a time.
CHUNK_BYTES = 64 * 1024


async def stream_download(session: Any, url: str, *, what: str, max_bytes: int | None = None,
                          declared_size: int | None = None, headers: Mapping[str, str] | None = None,
                          timeout: Any = None, status_notes: Mapping[int, str] | None = None,
                          check: Callable[[Any], None] | None = None,
                          chunk_bytes: int = CHUNK_BYTES) -> AsyncIterator[bytes]:
    """GET ``url`` with ``session`` (an ``aiohttp.ClientSession``) and yield the body in chunks.

    ``what`` names the file in every error (``"discord: the file 'scan.pdf'"``).
    ``declared_size``: what the platform said the file is; ``max_bytes``: the
    most the plugin downloads at all (a platform's own download limit). A
    ``Content-Length`` over either is refused before a byte is read; a body
    that runs past either stops with a :class:`FetchError` before the chunk
    that crosses it is handed over. ``headers`` go with the request (a bot
    token: send it only to the platform's own hosts); ``timeout`` (an
    ``aiohttp.ClientTimeout``) replaces the session's for this request.
    ``status_notes`` adds a platform's meaning to a status (``{404: "its link
    expired"}``); ``check(response)`` may raise :class:`FetchError` after the
    status is known and before the body is read (Slack's sign-in page served
    as HTTP 200). Any status but 200 is a :class:`FetchError`.
    """
    import aiohttp

    limits = [(limit, label) for limit, label in ((declared_size, "declared"), (max_bytes, "allowed"))
              if limit is not None]
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    try:
        async with session.get(url, headers=dict(headers or {}), allow_redirects=True, **extra) as response:
            if response.status != 200:
                note = (status_notes or {}).get(response.status)
                raise FetchError(f"{what} could not be downloaded: HTTP {response.status}"
                                 + (f" ({note})" if note else ""))
            if check is not None:
                check(response)
            length = response.content_length
            for limit, label in limits:
                if length is not None and length > limit:
                    raise FetchError(f"{what} is {length} bytes, more than the {limit} {label}; not downloaded")
            received = 0
            async for chunk in response.content.iter_chunked(chunk_bytes):
                received += len(chunk)
                for limit, label in limits:
                    if received > limit:
                        raise FetchError(f"{what} ran past the {limit} bytes {label}; download stopped")
                yield chunk
    except FetchError:
        raise
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        # never the exception's text: aiohttp quotes the URL, and a file URL holds a signature or a token
        raise FetchError(f"{what} could not be downloaded ({type(exc).__name__})") from None
