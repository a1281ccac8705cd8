"""The plugin contract. Third parties build on these names: change with care.

Collection hooks are plain sync calls. The four stream hooks may be
``async def``: pluggy then returns coroutines that the core awaits. The
core calls stream hooks only on the plugin that registered the stream's
platform.
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

PROJECT = "hermes_gateway"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_platforms(register: Callable[..., None]) -> None:
    """Call ``register(Platform(...))`` for each platform this plugin serves."""


@hookspec
def register_tools(register: Callable[..., None]) -> None:
    """Call ``register(Tool(...))`` for each tool the agent may call."""


@hookspec
def register_routes(app: Any) -> None:
    """Add HTTP routes (webhooks) to the gateway's ``aiohttp.web.Application``."""


@hookspec
def startup(gateway: Any) -> Any:
    """The gateway is starting; may return an awaitable."""


@hookspec
def shutdown(gateway: Any) -> Any:
    """The gateway is stopping; may return an awaitable."""


@hookspec
def supports_edit(stream: Any) -> bool:
    """Whether messages in this stream's chat can be edited in place."""


@hookspec
def on_stream_start(stream: Any) -> Any:
    """A reply is starting: show a typing indicator, set up a native draft. Sends no text."""


@hookspec
def on_delta(stream: Any, message: Any, text: str) -> Any:
    """Show ``text`` (the whole visible text of that one message) in ``message``.

    When ``message`` is None, send a new message and return its ``MessageRef``.
    """


@hookspec
def on_stream_end(stream: Any, message: Any, text: str) -> Any:
    """The final text of that message: edit it, or send it when ``message`` is None.

    Returns the ``MessageRef`` of the message that now shows ``text``.
    """
