"""Downloading a file a person shared: ``url_private`` with the bot token, streamed in chunks, never held whole.

Slack serves a shared file at its ``url_private`` (``files.slack.com``) to a
request carrying the bot token (``Authorization: Bearer xoxb-…``) of an app
with the ``files:read`` scope. The bytes come as aiohttp reads them
(``response.content.iter_chunked``); the core writes them to its media
directory and counts them against its limits.

Three things are the plugin's own:

* the bot token goes only to Slack's file hosts (``*.slack.com``,
  ``*.slack-gov.com``) or the host of ``api_base_url`` (a proxy, the
  emulator): a file URL pointing elsewhere is refused, token unsent;
* Slack answers a request it will not serve (no token, no ``files:read``)
  with HTTP 200 and its sign-in page, not a 401: an HTML answer for a file
  that is not HTML is a :class:`~hermes_gateway.FetchError` saying so,
  never bytes handed to the core as the file;
* never more bytes than Slack declared for the file (a ``Content-Length``
  above it is refused before a byte is read; a body running past it is
  cut off).

Every failure is a ``FetchError`` naming the file, never the token.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable
from urllib.parse import urlsplit

from hermes_gateway import FetchError, stream_download

#: Bytes handed to the core at a time.
CHUNK_BYTES = 64 * 1024
#: Seconds Slack may stay silent mid-download before it counts as failed (a whole file may take longer).
READ_TIMEOUT = 30.0
CONNECT_TIMEOUT = 15.0
#: Where Slack serves files (commercial and GovSlack).
SLACK_FILE_DOMAINS = ("slack.com", "slack-gov.com")
#: What Slack means by a 404 for a file the bot was told of.
GONE = {404: "deleted, or not shared where the bot can see it"}
SCOPE_NOTE = "the app needs the files:read scope (OAuth & Permissions), then reinstall it"


class Downloads:
    """One client's downloads of shared files: its own aiohttp session, closed with the client."""

    def __init__(self, token: str, api_base_url: str, *, read_timeout: float = READ_TIMEOUT,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self._token = token
        self._api_host = (urlsplit(api_base_url).hostname or "").lower()
        self.read_timeout = read_timeout
        self.connect_timeout = connect_timeout
        self._session: Any = None

    def fetcher(self, url: str, *, filename: str, size: int | None,
                mime: str | None) -> Callable[[], AsyncIterator[bytes]]:
        """The ``fetch`` of one :class:`~hermes_gateway.Attachment`: nothing is requested until it is called."""
        return lambda: self.stream(url, filename=filename, size=size, mime=mime)

    def may_carry_token(self, url: str) -> bool:
        """Whether ``url`` is on a host the bot token may be sent to (Slack's file hosts, ``api_base_url``'s)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("https", "http") or not host:
            return False
        if host == self._api_host:
            return True
        return parts.scheme == "https" and any(host == d or host.endswith("." + d) for d in SLACK_FILE_DOMAINS)

    async def stream(self, url: str, *, filename: str, size: int | None, mime: str | None) -> AsyncIterator[bytes]:
        """The file's bytes in chunks of at most :data:`CHUNK_BYTES`; :class:`FetchError` when it cannot be had.

        No more than the ``size`` Slack declared (:func:`hermes_gateway.stream_download`'s guard); the token
        only to Slack's hosts; Slack's sign-in page is not the file.
        """
        what = f"slack: the file {filename!r}"
        if not self.may_carry_token(url):
            raise FetchError(f"{what} is not on a Slack file host; not downloaded (the bot token stays here)")

        def not_the_sign_in_page(response: Any) -> None:
            if response.content_type == "text/html" and (mime or "").split(";")[0] != "text/html":
                raise FetchError(f"{what} could not be downloaded: Slack answered with its sign-in page "
                                 f"({SCOPE_NOTE})")

        async for chunk in stream_download(self.session(), url, what=what, declared_size=size,
                                           headers={"Authorization": f"Bearer {self._token}"},
                                           status_notes=GONE, check=not_the_sign_in_page, chunk_bytes=CHUNK_BYTES):
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
