"""Building a platform's running client: the one lifecycle the gateway, ``ask`` and the test kit share.

``Platform(settings=S, client=factory)``: the core parses ``platforms.<name>``
into ``S`` (:mod:`.platform_settings`), registers every secret field with
the log scrubber, builds a :class:`~.platform_context.PlatformContext`,
and calls ``factory(settings, context)``. Routes may be mounted only
during that call. A client missing a stream method its platform needs
(and whose plugin does not implement the hook either) is refused here,
in one line, before anything is sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from .accounts import as_account
from .client_contract import check_client_methods
from .errors import ConfigError, StartError
from .platform import Platform
from .platform_context import PlatformContext, RouteHandler
from .platform_settings import parse_settings, secret_values
from .secrets import protect

if TYPE_CHECKING:
    from aiohttp import web

    from .config import Config
    from .plugins import RegisteredPlatform


def settings_for(platform: Platform, section: Any, *, source: str) -> Any:
    """The parsed settings of ``platform`` (None when it declares no settings type), secrets registered."""
    if platform.settings is None:
        return None
    settings: object = parse_settings(platform.settings, section, platform=platform.name, source=source)
    protect(*secret_values(settings))
    return settings


def make_client(registered: "RegisteredPlatform", settings: Any, context: PlatformContext) -> Any:
    """``factory(settings, context)``; afterwards the context mounts no more routes."""
    from .plugins import implemented_hooks

    platform = registered.platform
    assert platform.client is not None
    try:
        client = platform.client(settings, context)
    except (ConfigError, StartError):
        raise
    except Exception as exc:
        raise StartError(f"platform {platform.name} (plugin {registered.plugin_name}) could not be set up: "
                         f"{type(exc).__name__}: {exc}") from exc
    finally:
        context._add_route = None
    check_client_methods(client, platform=platform.name, plugin=registered.plugin_name)
    hooks = set(implemented_hooks(registered.plugin))
    needed = ["on_stream_end"]
    if platform.append_only or callable(getattr(client, "supports_edit", None)):
        needed.append("on_delta")
    if platform.media is not None:
        needed.append("on_media")
    missing = [name for name in needed if not callable(getattr(client, name, None)) and name not in hooks]
    if missing:
        raise StartError(f"platform {platform.name} (plugin {registered.plugin_name}): its client has no "
                         f"{missing[0]} method and the plugin no {missing[0]} hook")
    return client


@dataclass(frozen=True)
class ClientHost:
    """What a platform's context reaches of the gateway, each part typed (built by the gateway, its composition
    root): taking a message, whether messages are still taken, the store (conversations, the platform's values),
    button presses (the approvals), the metrics (the platform's own counters) and the dashboard's record."""

    receive: Callable[[Any], Any]
    accepting: Callable[[], bool]
    store: Callable[[], Any]
    approvals: Callable[[], Any]
    metrics: Callable[[], Any]
    platform_status: Any = None
    delivery: Callable[[], Any] | None = None  # the delivery core: a client's paced reads (catch-up)


def build_client(registered: "RegisteredPlatform", config: "Config", *, host: ClientHost,
                 app: "web.Application") -> Any:
    """The client of one enabled platform of a gateway (``host``), its routes mounted on ``app``."""
    name = registered.platform.name
    settings = settings_for(registered.platform, config.platforms.get(name), source=config.source)

    mounted: list[str] = []

    def add_route(method: str, path: str, handler: RouteHandler) -> None:
        taken = _route_owner(app, method, path)
        if taken is not None:  # aiohttp would take it, and the first route would get every request
            raise StartError(f"platform {name}: the route {method} {path} is already mounted (by another account "
                             f"of {registered.plugin_platform}, or a plugin); give each account its own receiving "
                             f"(e.g. polling) or its own path")
        app.router.add_route(method, path, handler)
        mounted.append(path)

    context = PlatformContext(
        name, source=config.source, receive=_receiver(host, name, registered.plugin_platform),
        accepting=host.accepting, add_route=add_route, count=_counter(host),
        has_conversation=_conversations(host, name),
        streaming_transport=config.streaming.overrides.get(name, {}).get("transport"),
        choose=_chooser(host, name, registered.plugin_platform), connection=_connection(host),
        values=_StoreValues(host), catch_up=config.conversation.catch_up,
        catch_up_window=config.conversation.catch_up_window, recent_chats=_recent_chats(host, name),
        paced=None if host.delivery is None else _pacing(host.delivery, name))
    client = make_client(registered, settings, context)
    status = host.platform_status  # the dashboard's record
    if status is not None:
        from .platform_status import receive_mode

        status.set_mode(name, receive_mode(settings, bool(mounted)))
    from .settings.reactions import check_platform_emoji

    check_platform_emoji(config.reactions, name, client, source=config.source)  # Telegram's fixed list
    return client


def _counter(host: ClientHost) -> Callable[[str, str, int], None]:
    def count(platform: str, event: str, n: int) -> None:
        host.metrics().platform_event(platform, event, n)
    return count


def _connection(host: ClientHost) -> Callable[[str, bool, str | None], None] | None:
    """A client's ``report_connected/disconnected`` into the gateway's platform record (the dashboard's)."""
    status = host.platform_status
    return None if status is None else status.report


def _conversations(host: ClientHost, platform: str) -> Callable[[str, str | None], Awaitable[bool]]:
    async def has_conversation(chat_id: str, thread_id: str | None) -> bool:
        from .store import ConversationKey

        try:
            return bool(await host.store().has_conversation(ConversationKey(platform, str(chat_id), thread_id)))
        except asyncio.CancelledError:
            raise
        except Exception:  # a failing store must not stop a platform from receiving
            return False
    return has_conversation


#: The most conversations a catch-up is offered (the store lists them newest first, across platforms).
RECENT_CHATS = 500


def _recent_chats(host: ClientHost, platform: str) -> Callable[[float], Awaitable[list[tuple[str, str | None]]]]:
    async def recent_chats(within: float) -> list[tuple[str, str | None]]:
        import time

        since = time.time() - within
        found: list[tuple[str, str | None]] = []
        for summary in await host.store().list_conversations(RECENT_CHATS):
            if summary.last_activity < since:
                break  # newest first: the rest are older still
            key = (summary.chat_id, summary.thread_id)
            if summary.platform == platform and key not in found:
                found.append(key)
        return found
    return recent_chats


def _pacing(delivery: Callable[[], Any], platform: str) -> Any:
    """A client's one request about a chat through the delivery core's one path (:meth:`Delivery.call`)."""
    async def paced(chat_id: str, invoke: Callable[[], Awaitable[Any]], what: str, chat_kind: str | None) -> Any:
        from .errors import DeliveryError

        outcome = await delivery().call(platform, chat_id, invoke, what=what, chat_kind=chat_kind)
        if not outcome.ok:
            raise DeliveryError(f"{platform} {what} in chat {chat_id}: {outcome.failure}", retryable=False)
        return outcome.value
    return paced


class _StoreValues:
    """A platform's small values in the gateway's store, looked up per call (a restarted gateway opens a fresh
    store): with PostgreSQL, every replica sees the same sync position."""

    def __init__(self, host: ClientHost) -> None:
        self._host = host

    async def platform_value(self, platform: str, key: str) -> str | None:
        return await self._host.store().platform_value(platform, key)  # type: ignore[no-any-return]

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        return await self._host.store().set_platform_value(platform, key, value, max_total)  # type: ignore[no-any-return]

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        return await self._host.store().delete_platform_value(platform, key)  # type: ignore[no-any-return]


def _route_owner(app: "web.Application", method: str, path: str) -> str | None:
    """The path of a route ``method path`` already on ``app`` (None: free)."""
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        if route.method in (method.upper(), "*") and (info.get("path") or info.get("formatter")) == path:
            return path
    return None


def _receiver(host: ClientHost, account: str, plugin: str) -> Callable[[Any], Any]:
    """``host.receive``, the message taken as the account's when the plugin named its own platform (accounts.py)."""
    if account == plugin:
        return host.receive

    def receive(incoming: Any) -> Any:
        return host.receive(as_account(incoming, account, plugin))
    return receive


def _chooser(host: ClientHost, account: str, plugin: str) -> Callable[[Any], Awaitable[str | None]]:
    """A button press goes to the gateway's approval desk, or to the replica whose reply waits (issue 25)."""
    async def choose(answer: Any) -> str | None:
        answer = as_account(answer, account, plugin)
        return await host.approvals().answer(answer.platform, answer.chat_id, answer.user_id, answer.choice_id,
                                           answer.option)
    return choose
