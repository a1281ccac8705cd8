"""Calling the stream hooks of exactly one platform, awaiting what needs awaiting.

A platform's stream calls go to its running client's method of the same
name when the client defines one (``Platform(client=...)``, one client per
gateway), else to the hook its plugin implements. pluggy hooks are sync:
an ``async def`` hookimpl returns a coroutine. This is the one small helper
that calls either and awaits the result when it is awaitable.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import pluggy

from ..platform_context import PlatformClient
from ..plugins import STREAM_HOOKS, RegisteredPlatform


def carried_client(plugin: Any) -> PlatformClient | None:
    """The client a plugin object carries of its own (the reference platform's ``client``: a chat in memory),
    called whenever no client of its platform is running (a gateway that does not enable it, the delivery core
    used alone); None for a plugin that carries none."""
    own = getattr(plugin, "client", None)
    return own if isinstance(own, PlatformClient) else None


class PlatformHooks:
    """The stream hooks of the plugin that registered one platform."""

    def __init__(self, pm: pluggy.PluginManager, registered: RegisteredPlatform,
                 client: Callable[[], Any] | None = None) -> None:
        """``client()``: the platform's running client now, or None (looked up per call: a restarted
        gateway builds a fresh one)."""
        self.registered = registered
        self.platform = registered.platform
        running = client or (lambda: None)
        carried = carried_client(registered.plugin)
        self._client = running if carried is None else (lambda: running() or carried)
        others = [p for p in pm.get_plugins() if p is not registered.plugin]
        self._callers = {
            name: pm.subset_hook_caller(name, remove_plugins=others)
            for name in STREAM_HOOKS
        }
        plugin_has = {name: bool(caller.get_hookimpls()) for name, caller in self._callers.items()}
        self._plugin_has = plugin_has
        self.implements = dict(plugin_has)
        if self.platform.client is not None:  # the client's methods count; checked again when it is built
            self.implements = {name: True for name in STREAM_HOOKS}
            self._refine(self._client())
        if not self.implements["on_stream_end"]:  # make_plugins refuses such a plugin; a hand-built manager may not
            raise TypeError(f"plugin {registered.plugin_name!r} registers platform {self.platform.name!r} but does "
                            f"not implement on_stream_end: the final text of its messages could not be shown")

    def running_client(self) -> Any:
        """The platform's running client now, or None (a plugin without one, or not started)."""
        return self._client()

    def _refine(self, client: Any) -> None:
        """With a running client known: a method counts when the client or the plugin has it."""
        if client is not None:
            self.implements = {name: callable(getattr(client, name, None)) or self._plugin_has[name]
                               for name in STREAM_HOOKS}

    async def call(self, name: str, **kwargs: Any) -> Any:
        """Call ``name`` on this platform's client or plugin; None when neither implements it."""
        client = self._client()
        method = getattr(client, name, None) if client is not None else None
        if callable(method):
            result = method(**kwargs)
        elif not self._plugin_has[name]:
            if self.platform.client is not None and client is None and name == "on_stream_end":
                from ..errors import DeliveryError

                raise DeliveryError(f"platform {self.platform.name} is not running (its client is built when "
                                    f"the gateway starts)", retryable=False)
            return None
        else:
            results = self._callers[name](**kwargs)
            result = results[0] if results else None
        if inspect.isawaitable(result):
            result = await result
        return result

    def free_previews(self) -> Callable[[Any], bool] | None:
        """``free_previews(stream)`` of the running client when it defines one, else ``Platform.free_previews``.

        A client's answer may depend on its settings (Telegram's drafts are free with ``charge_drafts: false``).
        """
        method = getattr(self._client(), "free_previews", None)
        return method if callable(method) else self.platform.free_previews

    async def supports_edit(self, stream: Any) -> bool:
        self._refine(self._client())
        if not self.implements["on_delta"]:
            return False
        answer = await self.call("supports_edit", stream=stream)
        return True if answer is None else bool(answer)
