"""Calling the stream hooks of exactly one plugin, awaiting what needs awaiting.

pluggy hooks are sync: an ``async def`` hookimpl returns a coroutine. This
is the one small helper that calls a hook on the stream's own platform
plugin and awaits the result when it is awaitable.
"""

from __future__ import annotations

import inspect
from typing import Any

import pluggy

from ..plugins import STREAM_HOOKS, RegisteredPlatform


class PlatformHooks:
    """The stream hooks of the plugin that registered one platform."""

    def __init__(self, pm: pluggy.PluginManager, registered: RegisteredPlatform) -> None:
        self.registered = registered
        self.platform = registered.platform
        others = [p for p in pm.get_plugins() if p is not registered.plugin]
        self._callers = {
            name: pm.subset_hook_caller(name, remove_plugins=others)
            for name in STREAM_HOOKS
        }
        self.implements = {name: bool(caller.get_hookimpls()) for name, caller in self._callers.items()}
        if not self.implements["on_stream_end"]:  # make_plugins refuses such a plugin; a hand-built manager may not
            raise TypeError(f"plugin {registered.plugin_name!r} registers platform {self.platform.name!r} but does "
                            f"not implement on_stream_end: the final text of its messages could not be shown")

    async def call(self, name: str, **kwargs: Any) -> Any:
        """Call hook ``name`` on this platform's plugin; None when it does not implement it."""
        if not self.implements[name]:
            return None
        results = self._callers[name](**kwargs)
        result = results[0] if results else None
        if inspect.isawaitable(result):
            result = await result
        return result

    async def supports_edit(self, stream: Any) -> bool:
        if not self.implements["on_delta"]:
            return False
        answer = await self.call("supports_edit", stream=stream)
        return True if answer is None else bool(answer)
