"""What a running platform client may ask of the gateway that runs it — and nothing more.

A platform plugin's client is built by its factory,
``Platform(client=factory)``, as ``factory(settings, context)``: the parsed
settings and one :class:`PlatformContext`. The context is the whole of
what the gateway offers a platform: take a message, ask whether messages
are still taken, mount a webhook route, count an event for ``/metrics``,
ask whether a conversation exists, keep a few small values of its own
(:meth:`PlatformContext.set_value`: a sync position), say whether the platform is
reachable (:meth:`PlatformContext.report_connected`), and catch up on what was sent
while the gateway was down (:attr:`PlatformContext.catch_up`, :meth:`PlatformContext.recent_chats`,
a read paced like any call: :meth:`PlatformContext.paced`). A plugin never sees the gateway,
its store, its API server or its aiohttp app, so the core may change
behind this object without breaking third parties.

:class:`PlatformClient` is a convenience base class: ``start``/``stop``
that do nothing (a send-only platform needs no more). The stream methods
(``supports_edit``, ``on_stream_start``, ``on_delta``, ``on_stream_end``,
``on_media``) have the same names and arguments as the stream hooks and
are called only for this platform's replies.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol, TypeVar

if TYPE_CHECKING:
    from aiohttp import web

    from .messages.choice import ChoiceAnswer
    from .media import Media
    from .messages.incoming import Incoming
    from .platform import MessageRef, Stream

RouteHandler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]
T = TypeVar("T")
#: ``paced(chat_id, invoke, what, chat_kind)``: one call through the chat's budget (the core's delivery).
Pacing = Callable[[str, Callable[[], Awaitable[Any]], str, "str | None"], Awaitable[Any]]

#: A key of :meth:`PlatformContext.set_value`: a short name (``sync_token``), at most this many characters.
MAX_VALUE_KEY_CHARS = 200
#: One value of :meth:`PlatformContext.set_value`, as JSON text in UTF-8, at most this many bytes.
MAX_VALUE_BYTES = 64 * 1024
#: All the values of one platform (instance) together, as JSON text, at most this many bytes.
MAX_PLATFORM_VALUE_BYTES = 1024 * 1024


class ValueStore(Protocol):
    """Where a context keeps its platform's values: the gateway's store (memory, SQLite, PostgreSQL)."""

    async def platform_value(self, platform: str, key: str) -> str | None: ...

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool: ...

    async def delete_platform_value(self, platform: str, key: str) -> bool: ...


class LocalValues:
    """Values in this process's memory: a context built without a store (a plugin's own unit test), and the
    memory store's (:class:`~.store.memory.MemoryStore`)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}

    async def platform_value(self, platform: str, key: str) -> str | None:
        return self.values.get((platform, key))

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        others = sum(len(v.encode()) for (p, k), v in self.values.items() if p == platform and k != key)
        if others + len(value.encode()) > max_total:
            return False
        self.values[(platform, key)] = value
        return True

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        return self.values.pop((platform, key), None) is not None


class PlatformContext:
    """The gateway, as one running platform client sees it. Built by the core (or the test kit), never by a plugin.

    ``platform``: the platform's name. ``source``: the config file it was
    configured from (for one-line errors). ``streaming_transport``: the
    value of ``streaming.<platform>.transport`` (how previews are shown, in
    the platform's own words), or None.
    """

    def __init__(self, platform: str, *, source: str = "(config)",
                 receive: Callable[["Incoming"], "asyncio.Future[Any]"],
                 accepting: Callable[[], bool] = lambda: True,
                 add_route: Callable[[str, str, RouteHandler], object] | None = None,  # its result is unused
                 count: Callable[[str, str, int], None] | None = None,
                 has_conversation: Callable[[str, str | None], Awaitable[bool]] | None = None,
                 streaming_transport: str | None = None,
                 choose: Callable[["ChoiceAnswer"], Awaitable[str | None]] | None = None,
                 connection: Callable[[str, bool, str | None], None] | None = None,
                 values: ValueStore | None = None, catch_up: str = "answer", catch_up_window: float = 3600.0,
                 recent_chats: Callable[[float], Awaitable[list[tuple[str, str | None]]]] | None = None,
                 paced: Pacing | None = None) -> None:
        self.platform = platform
        #: ``conversation.catch_up``: "answer" messages sent while the gateway was down, or "skip" them.
        self.catch_up = catch_up
        #: ``conversation.catch_up_window``: how far back (seconds) a catch-up looks, in chats active that recently.
        self.catch_up_window = catch_up_window
        self._recent_chats = recent_chats
        self._paced = paced
        self._values: ValueStore = values if values is not None else LocalValues()
        self.source = source
        self.streaming_transport = streaming_transport
        self._receive = receive
        self._accepting = accepting
        self._add_route = add_route
        self._count = count
        self._has_conversation = has_conversation
        self._choose = choose
        self._connection = connection
        #: What the client last reported of its connection: None (nothing yet), "connected" or "disconnected".
        self.connection: str | None = None
        #: The error it gave with its last ``report_disconnected`` (None while connected).
        self.connection_error: str | None = None
        #: The events counted so far by :meth:`count` (also in ``/metrics`` as ``hermes_platform_events_total``).
        self.counts: dict[str, int] = {}

    def receive(self, incoming: "Incoming") -> "asyncio.Future[Any]":
        """Hand a received message to the core and return at once (a webhook answers before the model runs).

        The core dedupes it, checks who may talk, runs commands, and answers
        it one reply at a time per chat. The returned future completes when
        the reply is delivered; nobody has to await it.
        """
        return self._receive(incoming)

    @property
    def accepting(self) -> bool:
        """Whether messages are still taken. While the gateway stops they are not: a webhook then answers
        503, so the platform delivers the message again (to another replica, or after the restart)."""
        return self._accepting()

    def add_route(self, method: str, path: str, handler: RouteHandler) -> None:
        """Mount an HTTP route (a webhook) on the gateway's listener. Only while the client is being built.

        The handler gets an ``aiohttp.web.Request``; it runs to completion even
        if the sender hangs up. Verify the request's signature before parsing it.
        """
        if self._add_route is None:
            raise RuntimeError(f"platform {self.platform}: routes can only be added while the client is built "
                               f"(in the factory), not after the gateway started listening")
        self._add_route(method.upper(), path, handler)

    def count(self, event: str, n: int = 1) -> None:
        """Count one of this platform's own events (``hermes_platform_events_total{platform, event}``)."""
        self.counts[event] = self.counts.get(event, 0) + n
        if self._count is not None:
            self._count(self.platform, event, n)

    async def has_conversation(self, chat_id: str, thread_id: str | None = None) -> bool:
        """Whether the core keeps a conversation for this chat (and thread): e.g. a thread the bot is part of."""
        if self._has_conversation is None:
            return False
        return await self._has_conversation(chat_id, thread_id)

    async def recent_chats(self, within: float) -> list[tuple[str, str | None]]:
        """This platform's ``(chat_id, thread_id)`` with a conversation active in the last ``within`` seconds.

        Newest first, at most a few hundred: the chats a catch-up after a restart looks into (the bot has
        a conversation there, so what was sent there while it was away may be for it). Empty without a store.
        """
        if self._recent_chats is None:
            return []
        return await self._recent_chats(within)

    async def paced(self, chat_id: str, invoke: Callable[[], Awaitable[T]], *, what: str,
                    chat_kind: str | None = None) -> T:
        """Make ``invoke()`` (one request about ``chat_id``: a read of its history) through the chat's budget.

        The same path as every call into a chat: it waits for the chat's and the bot's budget (the
        replicas' shared ones too), and when ``invoke`` raises ``RateLimited`` it is made again once
        ``retry_after`` has passed; a retryable ``DeliveryError`` is retried with back-off. So a plugin
        reads without sleeping or retrying itself. Returns what ``invoke`` returned; raises
        ``DeliveryError`` when it could not be made (refused for good, retries or time used up).
        Without a gateway (a plugin's own unit test) ``invoke`` is made once, unpaced.
        """
        if self._paced is None:
            return await invoke()
        return await self._paced(chat_id, invoke, what, chat_kind)  # type: ignore[no-any-return]

    async def choose(self, answer: "ChoiceAnswer") -> str | None:
        """Hand the core a button press (an answer to a ``Choice`` the client showed).

        Quick (with several replicas, one round trip to the coordination layer).
        Returns the short line to show to the person who pressed (a toast, an
        ephemeral message): approved, denied, "only the person who asked can
        answer this", "no longer open". A second press of the same question,
        or a press by someone not allowed, changes nothing. None: nothing to show.
        """
        if self._choose is None:
            return None
        return await self._choose(answer)

    async def get_value(self, key: str, default: Any = None) -> Any:
        """The value this platform stored under ``key`` with :meth:`set_value`, or ``default``.

        For a plugin's own small state that must survive a restart and be the same on every replica: Matrix's
        sync position, an IMAP mailbox's last seen UID. Kept in the gateway's store (SQLite, or PostgreSQL
        shared by replicas), per platform instance: two accounts of one plugin each have their own.
        """
        text = await self._values.platform_value(self.platform, _checked_key(key))
        return default if text is None else json.loads(text)

    async def set_value(self, key: str, value: Any) -> None:
        """Keep ``value`` (anything JSON can hold: a string, a number, a small dict) under ``key``.

        Small values only: a key of at most 200 characters, a value of at most 64 KiB as JSON, and all of
        one platform's values at most 1 MiB together; more is a ``ValueError`` naming the limit (nothing is
        stored then). A value JSON cannot hold (a set, NaN) is a ``ValueError`` too.
        """
        key = _checked_key(key)
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"platform {self.platform}: the value of {key!r} is not JSON ({exc})") from None
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_VALUE_BYTES:
            raise ValueError(f"platform {self.platform}: the value of {key!r} is {size} bytes as JSON; "
                             f"at most {MAX_VALUE_BYTES} per key")
        if not await self._values.set_platform_value(self.platform, key, text, MAX_PLATFORM_VALUE_BYTES):
            raise ValueError(f"platform {self.platform}: storing {key!r} would take its values past "
                             f"{MAX_PLATFORM_VALUE_BYTES} bytes; delete some (delete_value)")

    async def delete_value(self, key: str) -> bool:
        """Forget ``key``; True when there was a value."""
        return await self._values.delete_platform_value(self.platform, _checked_key(key))

    def report_connected(self) -> None:
        """The platform is reachable now: a poll answered, the websocket said hello, the webhook was set.

        Two methods rather than one ``connection(up: bool)``: each call site
        then reads as what happened, and a disconnection cannot be reported
        without its reason. Cheap and idempotent: call it after every
        successful poll if that is simplest. A client that never calls it is
        shown as ``running`` (started, state unknown), never as ``connected``.
        """
        self.connection, self.connection_error = "connected", None
        if self._connection is not None:
            self._connection(self.platform, True, None)

    def report_disconnected(self, error: str) -> None:
        """The platform cannot be reached now (its poll fails, its websocket dropped and is reconnecting),
        with why, in a few words. The dashboard shows it, and it becomes the platform's last error (one
        line, secrets masked). Report :meth:`report_connected` again once it recovers."""
        self.connection, self.connection_error = "disconnected", error or "disconnected"
        if self._connection is not None:
            self._connection(self.platform, False, self.connection_error)

    def __repr__(self) -> str:
        return f"PlatformContext(platform={self.platform!r})"


def _checked_key(key: str) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_VALUE_KEY_CHARS:
        raise ValueError(f"a value's key is a non-empty string of at most {MAX_VALUE_KEY_CHARS} characters, "
                         f"got {key!r:.60}")
    return key


class PlatformClient:
    """The typed contract of a platform's running client: subclass it, define what your platform does.

    ``start``/``stop``/``close`` do nothing here. Every other method is
    optional, and declared here for the type checker only (``mypy`` then
    checks a subclass's signatures against this contract): the core looks
    for each on your client and uses it where it exists.

    - The stream methods are the stream hook specs (``hookspecs``), one way
      for every platform: ``on_stream_end`` always; ``on_delta`` and
      ``supports_edit`` to edit; ``on_stream_start`` for a typing indicator;
      ``on_media`` to send files. Their argument names are checked against
      the specs when the client is built, by pluggy, as pluggy checks a hook
      (a misspelt argument stops the start in one line).
    - ``react`` for status reactions, with ``reaction_emoji`` when the
      platform accepts only a fixed list; ``offer_choice``/``close_choice``
      for buttons; ``free_previews`` when previews cost the chat nothing;
      ``warm_up`` for one-shot commands (``ask``, ``send``), which build the
      client without starting it: the SDK is imported and its connections
      opened before the first call the core charges to a chat's budget.

    A base class rather than a ``typing.Protocol``: a Protocol makes each
    optional method abstract, so a client without ``on_media`` could not be
    instantiated under the type checker.
    """

    settings: Any
    context: PlatformContext

    def __init__(self, settings: Any, context: PlatformContext) -> None:
        self.settings = settings
        self.context = context

    async def start(self) -> None:
        """Begin receiving messages (a poller, a websocket, setting a webhook). Called once the listener is up."""

    async def stop(self) -> None:
        """Stop receiving (replies being written still go out). Called once for a started client."""

    async def close(self) -> None:
        """Release connections, after the last reply. Called once for every built client, started or not."""

    if TYPE_CHECKING:  # optional: declared for the type checker, absent at run time (the core looks for them)
        def supports_edit(self, stream: Stream) -> bool | Awaitable[bool]:
            raise NotImplementedError

        def on_stream_start(self, stream: Stream) -> Awaitable[None] | None:
            raise NotImplementedError

        def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> Awaitable[MessageRef]:
            raise NotImplementedError

        def on_stream_end(self, stream: Stream, message: MessageRef | None,
                          text: str) -> Awaitable[MessageRef]:
            raise NotImplementedError

        def on_media(self, stream: Stream, media: Media) -> Awaitable[MessageRef]:
            raise NotImplementedError

        def react(self, chat_id: str, message_id: str, emoji: str,
                  thread_id: str | None = None) -> Awaitable[None]:
            raise NotImplementedError

        @property
        def reaction_emoji(self) -> frozenset[str] | None:
            raise NotImplementedError

        def offer_choice(self, stream: Stream, choice: Any) -> Awaitable[MessageRef]:
            raise NotImplementedError

        def close_choice(self, stream: Stream, message: MessageRef, text: str) -> Awaitable[None]:
            raise NotImplementedError

        def free_previews(self, stream: Stream) -> bool:
            raise NotImplementedError

        def warm_up(self) -> Awaitable[None]:
            raise NotImplementedError
