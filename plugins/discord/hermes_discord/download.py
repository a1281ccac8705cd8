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

from typing import Any, AsyncIterator, Callable

from hermes_gateway import stream_download

#: Bytes handed to the core at a time.
CHUNK_BYTES = 64 * 1024
#: Seconds the CDN may stay silent mid-download before it counts as failed (a whole file may take longer).
READ_TIMEOUT = 30.0
CONNECT_TIMEOUT = 15.0
#: What Discord's CDN means by a refusal: a signed link is good until its ``ex`` time.
EXPIRED = {403: "its link expired", 404: "its link expired"}


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
        """The file's bytes in chunks of at most :data:`CHUNK_BYTES`; :class:`FetchError` when it cannot be had.

        No more than the ``size`` Discord declared (:func:`hermes_gateway.stream_download`'s guard); a 403 or
        404 means the signed link expired.
        """
        async for chunk in stream_download(self.session(), url, what=f"discord: the file {filename!r}",
                                           declared_size=size, status_notes=EXPIRED, chunk_bytes=CHUNK_BYTES):
            yield chunk

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
