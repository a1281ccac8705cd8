"""The HTTP transport of the bot's Bot API calls: aiohttp for text calls, PTB's httpx transport for uploads.

A reply's calls (sendMessage, editMessageText, sendChatAction, setMessageReaction ...) are small form posts,
made by the thousand when many replies grow at once. python-telegram-bot's own transport (httpx, httpcore,
anyio, h11) spent ~1.6 ms of CPU on each one, one at a time, and ~3 ms with 16 in flight: httpcore's pool
scans every connection (asking each idle socket whether it is readable) for every queued request and again
as each one ends. At 1,000 chats that was most of the gateway's CPU after the model's last token (issue 39).
aiohttp's client (the gateway's own HTTP library) keeps idle connections in a list per host and takes the
last: a call costs a fraction of that (``bench/bench_telegram_calls.py``).

What stays as PTB has it: the request body (the same form fields, url-encoded, PTB's ``User-Agent``), the
timeouts (connect and pool: PTB's defaults 5 s and 1 s; read: :data:`TEXT_READ_TIMEOUT`), and the errors: a timeout is PTB's
``TimedOut`` (its cause a ``ConnectTimeout`` when the request cannot have been sent, as
:func:`.errors.translate` reads it), any other failure of the connection a ``NetworkError``. A call with
files (``sendPhoto`` ...) goes through PTB's httpx transport unchanged, whose write timeout and
``WriteTimeout`` :mod:`.media` relies on.

At most ``MAX_IN_FLIGHT`` calls are in flight; later ones wait in an ``asyncio.Semaphore`` (FIFO, constant
cost), and as many connections are kept alive.

A reply's text calls (``sendMessage`` / ``editMessageText``, the plugin's ``_post``) skip PTB's request objects
too: ``BotRequest.post_text`` sends the parameters as one JSON body and reads only ``result`` from a 2xx answer. The project's
rule is to prefer a well-kept library to a hand-written twin unless a benchmark shows it must be: this one does
(issue 39, CPU per platform call after the model's last token at 1,000 chats, ``bench/scale.py``; PTB's
``Bot._post`` → ``RequestData`` → ``BaseRequest.post`` cost ~0.3 ms of a ~1 ms call,
``bench/bench_telegram_calls.py --via post``). Only the cheap, common path is ours: any answer that is not a 2xx
with JSON goes through PTB's own ``BaseRequest.post`` (:class:`_Answered`), so every error is the exception PTB
raises (``RetryAfter``, ``ChatMigrated``, ``BadRequest`` "message is not modified", ``Forbidden`` ...).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any
from urllib.parse import urlencode

#: Bot API calls in flight at once, and the connections they keep open: 16 flow 30 calls/s while each
#: takes half a second to answer.
MAX_IN_FLIGHT = 16
#: Seconds a text call waits for Telegram's answer (PTB's default is 5). A call whose answer comes later is a
#: timeout that *may have landed*: when it was a reply's first preview, the core never learns the message's id,
#: so it cannot edit it and sends the final text anew, and the chat keeps a partial copy with a cursor above the
#: reply (``bench/scale.py --stall-emulator 5:7``: 16 chats of 300 when the API stalled 7 s). An answer seconds
#: late is far likelier than none, so wait for it; Discord's plugin waits 15 s.
TEXT_READ_TIMEOUT = 20.0


class ConnectTimeout(TimeoutError):
    """The connection was not made (or no pooled one came free) in time: the request was not sent."""


def _close_quietly(connector: Any) -> None:
    """A bot dropped without ``shutdown()`` (a test's, a one-shot command's) closes its connections without a word,
    as httpx's did: aiohttp would log "Unclosed client session" at ERROR into whatever runs when it is collected.
    (A weakref callback runs before the session's ``__del__`` in the same collection.)"""
    try:
        connector._close()
    except Exception:  # a loop already closed: nothing is left to close
        pass


def bot_request(read_timeout: float = TEXT_READ_TIMEOUT) -> Any:
    """The transport of the bot's calls (getUpdates has its own, one connection, PTB's default).

    ``read_timeout``: seconds to wait for an answer, when a call does not say (:data:`TEXT_READ_TIMEOUT`; tests
    shorten it).
    """
    import aiohttp
    import httpx
    from telegram.error import NetworkError, TelegramError, TimedOut
    from telegram.request import BaseRequest, HTTPXRequest

    class Uploads(HTTPXRequest):
        """PTB's httpx transport for calls with files, at most ``MAX_IN_FLIGHT`` of them in its pool."""

        def __init__(self) -> None:
            limits = httpx.Limits(max_connections=MAX_IN_FLIGHT, max_keepalive_connections=MAX_IN_FLIGHT)
            super().__init__(connection_pool_size=MAX_IN_FLIGHT, httpx_kwargs={"limits": limits})

    class BotRequest(BaseRequest):
        """aiohttp for the bot's text calls (see the module's docstring); uploads through :class:`Uploads`."""

        #: PTB's defaults (``HTTPXRequest``): seconds to connect, to get a pooled connection.
        CONNECT_TIMEOUT, POOL_TIMEOUT = 5.0, 1.0

        def __init__(self) -> None:
            self._read_timeout = read_timeout
            self._session: aiohttp.ClientSession | None = None
            self._loop: asyncio.AbstractEventLoop | None = None
            self._slots = asyncio.Semaphore(MAX_IN_FLIGHT)
            self._uploads = Uploads()
            self._headers = {"User-Agent": self.USER_AGENT, "Content-Type": "application/x-www-form-urlencoded"}
            self._json_headers = {"User-Agent": self.USER_AGENT, "Content-Type": "application/json"}
            self._timeouts: dict[tuple[Any, Any, Any], aiohttp.ClientTimeout] = {}

        @property
        def read_timeout(self) -> float | None:
            return self._read_timeout

        async def initialize(self) -> None:
            await self._uploads.initialize()

        async def shutdown(self) -> None:
            session, self._session = self._session, None
            try:
                if session is not None and not session.closed:
                    await session.close()
            finally:
                await self._uploads.shutdown()

        def _client(self) -> aiohttp.ClientSession:
            """The session, made on first use in the running loop (a bot used from another loop gets a new one)."""
            session, loop = self._session, asyncio.get_running_loop()
            if session is None or session.closed or self._loop is not loop:
                self._loop = loop
                connector = aiohttp.TCPConnector(limit=MAX_IN_FLIGHT, limit_per_host=MAX_IN_FLIGHT,
                                                 keepalive_timeout=5.0)  # httpx's keep-alive, as before
                session = self._session = aiohttp.ClientSession(connector=connector, skip_auto_headers=("Accept",))
                weakref.finalize(self, _close_quietly, connector)
            return session

        def _timeout(self, read: Any, connect: Any, pool: Any) -> aiohttp.ClientTimeout:
            """aiohttp's timeout for PTB's three (a default, ``DEFAULT_NONE``, is PTB's default; None: none)."""
            key = (read, connect, pool)
            timeout = self._timeouts.get(key)
            if timeout is None:
                if read is BaseRequest.DEFAULT_NONE:
                    read = self._read_timeout
                if connect is BaseRequest.DEFAULT_NONE:
                    connect = self.CONNECT_TIMEOUT
                if pool is BaseRequest.DEFAULT_NONE:
                    pool = self.POOL_TIMEOUT
                # ``connect`` covers waiting for a pooled connection and making a new one
                whole = None if connect is None or pool is None else connect + pool
                timeout = aiohttp.ClientTimeout(total=None, connect=whole, sock_connect=connect, sock_read=read)
                if len(self._timeouts) < 64:  # a handful of distinct timeouts are ever asked for
                    self._timeouts[key] = timeout
            return timeout

        async def do_request(self, url: str, method: str, request_data: Any = None,
                             read_timeout: Any = BaseRequest.DEFAULT_NONE,
                             write_timeout: Any = BaseRequest.DEFAULT_NONE,
                             connect_timeout: Any = BaseRequest.DEFAULT_NONE,
                             pool_timeout: Any = BaseRequest.DEFAULT_NONE) -> tuple[int, bytes]:
            if request_data is not None and request_data.contains_files:
                async with self._slots:
                    return await self._uploads.do_request(url, method, request_data, read_timeout, write_timeout,
                                                          connect_timeout, pool_timeout)
            body = urlencode(request_data.json_parameters) if request_data is not None else ""
            return await self._send(method, url, body.encode(), self._timeout(read_timeout, connect_timeout,
                                                                              pool_timeout))

        async def _send(self, method: str, url: str, body: bytes, timeout: aiohttp.ClientTimeout,
                        headers: dict[str, str] | None = None) -> tuple[int, bytes]:
            async with self._slots:
                try:
                    async with self._client().request(method, url, data=body, headers=headers or self._headers,
                                                      timeout=timeout, allow_redirects=False) as response:
                        return response.status, await response.read()
                except aiohttp.ConnectionTimeoutError as exc:  # (before ServerTimeoutError: its subclass)
                    raise TimedOut("Timed out connecting to the Bot API") from ConnectTimeout(str(exc))
                except (asyncio.TimeoutError, aiohttp.ServerTimeoutError) as exc:
                    raise TimedOut from exc
                except aiohttp.ClientError as exc:
                    raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc

        async def post_text(self, url: str, params: dict[str, Any]) -> Any:
            """``Bot._post(method, params)`` for a reply's text call, without PTB's request objects (module doc).

            ``params``: the call's parameters as JSON values (None values are left out, as PTB does); sent as
            a JSON body, which the Bot API takes for any call without files: ``json.dumps`` is C, where
            url-encoding a 4,000-character text (``quote_plus``) is a Python loop over its bytes. Returns the
            answer's ``result``.
            """
            body = json.dumps({key: value for key, value in params.items() if value is not None}).encode()
            default = BaseRequest.DEFAULT_NONE
            try:
                status, payload = await self._send("POST", url, body, self._timeout(default, default, default),
                                                   self._json_headers)
            except TelegramError:
                raise
            except Exception as exc:  # as PTB's ``_request_wrapper`` words a failure of the HTTP client
                raise NetworkError(f"Unknown error in HTTP implementation: {exc!r}") from exc
            if 200 <= status <= 299:
                try:
                    return json.loads(payload)["result"]
                except (ValueError, KeyError, TypeError):
                    pass  # PTB's reading below says what is wrong with it
            return await _Answered(status, payload).post(url)

    class _Answered(BaseRequest):
        """An answer already read, handed to PTB's ``BaseRequest.post``: its errors, read PTB's way."""

        def __init__(self, status: int, payload: bytes) -> None:
            self._answer = status, payload

        @property
        def read_timeout(self) -> float | None:
            return None

        async def initialize(self) -> None:
            pass

        async def shutdown(self) -> None:
            pass

        async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
            return self._answer

    return BotRequest()
