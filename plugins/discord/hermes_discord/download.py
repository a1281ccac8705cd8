"""Downloading a file a person sent: streamed in chunks from Discord's CDN, never held whole.

An attachment's ``url`` is a signed CDN link (``cdn.discordapp.com/attachments/…?ex=…&hm=…``):
anyone holding it may fetch the file until it expires, so no token is sent
(the bot token never leaves for a URL that came in a message). The bytes
come as aiohttp reads them (``response.content.iter_chunked``); the core
writes them to its media directory and counts them against its limits.

What the plugin guarantees itself: no more bytes than Discord declared for
the file (a ``Content-Length`` above it is refused before a byte is read;
a body that runs past it is cut off), and every failure — a link that
expired (Discord answers 404 then), a refused or broken connection, a
stalled download — is a :class:`~hermes_gateway.FetchError` naming the file,
never the signed URL.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable

from hermes_gateway import FetchError

#: Bytes handed to the core at a time.
CHUNK_BYTES = 64 * 1024
#: Seconds the CDN may stay silent mid-download before it counts as failed (a whole file may take longer).
READ_TIMEOUT = 30.0
CONNECT_TIMEOUT = 15.0


class Downloads:
    """One client's downloads: a lazily opened aiohttp session, closed with the client."""

    def __init__(self, *, read_timeout: float = READ_TIMEOUT, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.read_timeout = read_timeout
        self.connect_timeout = connect_timeout
        self._session: Any = None

    def fetcher(self, url: str, *, filename: str, size: int | None) -> Callable[[], AsyncIterator[bytes]]:
        """The ``fetch`` of one :class:`~hermes_gateway.Attachment`: nothing is requested until it is called."""
        return lambda: self.stream(url, filename=filename, size=size)

    async def stream(self, url: str, *, filename: str, size: int | None) -> AsyncIterator[bytes]:
        """The file's bytes in chunks of at most :data:`CHUNK_BYTES`; :class:`FetchError` when it cannot be had."""
        import aiohttp

        what = f"discord: the file {filename!r}"
        try:
            async with self.session().get(url, allow_redirects=True) as response:
                if response.status != 200:
                    gone = " (its link expired)" if response.status in (403, 404) else ""
                    raise FetchError(f"{what} could not be downloaded: HTTP {response.status}{gone}")
                if size is not None and response.content_length is not None and response.content_length > size:
                    raise FetchError(f"{what} is {response.content_length} bytes, more than the {size} "
                                     f"Discord declared; not downloaded")
                received = 0
                async for chunk in response.content.iter_chunked(CHUNK_BYTES):
                    received += len(chunk)
                    if size is not None and received > size:
                        raise FetchError(f"{what} ran past the {size} bytes Discord declared; download stopped")
                    yield chunk
        except FetchError:
            raise
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            raise FetchError(f"{what} could not be downloaded ({type(exc).__name__})") from None

    def session(self) -> Any:
        """The session (built on first use, so building a client does no I/O)."""
        import aiohttp

        if self._session is None or self._session.closed:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout,
                                            sock_read=self.read_timeout)
            self._session = aiohttp.ClientSession(timeout=timeout)
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
