"""The plugin contract. Third parties build on these names: change with care.

Collection hooks are plain sync calls. The stream hooks may be
``async def``: pluggy then returns coroutines that the core awaits. The
core calls stream hooks only on the plugin that registered the stream's
platform.

Which stream hooks a platform plugin must implement (checked when it is
loaded, see :data:`hermes_gateway._core.plugins.REQUIRED_STREAM_HOOKS`):
``on_stream_end`` always (every message's final text goes through it);
``on_delta`` when the plugin implements ``supports_edit`` or declares an
``append_only`` platform (previews go through it); ``on_media`` when the
platform declares ``Platform(media=MediaLimits(...))``. A plugin may take fewer
arguments than a spec names (pluggy passes only those it asks for), so a
``register_routes(app)`` written before ``host`` was added still works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

import pluggy

from .media import Media
from .platform import MessageRef, Platform, Stream

if TYPE_CHECKING:
    from aiohttp import web

    from .plugin_host import PluginHost
    from .tools import Tool

PROJECT = "hermes_gateway"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_platforms(register: Callable[[Platform], None]) -> None:
    """Call ``register(Platform(...))`` for each platform this plugin serves."""


@hookspec
def register_tools(register: Callable[["Tool"], None], config: Any) -> None:
    """Call ``register(Tool(...))`` for each tool the agent may call.

    ``config`` (optional to declare) is the gateway's parsed config, so a tool that a setting turns on is
    registered only then; it is None where tools are listed without one (``AIAgent(tools=None)``).
    """


@hookspec
def register_commands(register: Callable[[Any], None], config: Any) -> None:
    """Call ``register(Command(name, help, run))`` for each chat command this plugin adds.

    ``config`` (optional to declare), as for :func:`register_tools`.

    The core handles ``/new``, ``/stop`` and ``/help`` on every platform;
    a plugin's commands join them (listed by ``/help``; a built-in cannot be
    replaced). ``run`` is ``async def run(ctx: CommandContext) -> str | None``,
    called when a person sends ``/name``; its text is the answer.
    """


@hookspec
def register_routes(app: "web.Application", host: "PluginHost", gateway: Any) -> None:
    """Add HTTP routes (webhooks) to the gateway's ``aiohttp.web.Application``.

    A webhook handler turns the request into ``Incoming(...)`` and calls
    ``host.receive(incoming)``, which returns at once (the reply runs in
    the core), so the request is answered before the model runs.
    ``gateway`` is deprecated (the private gateway itself; a third-party
    plugin asking for it gets a DeprecationWarning when it loads).
    """


@hookspec
def startup(host: "PluginHost", gateway: Any) -> Awaitable[None] | None:
    """The gateway is starting; may return an awaitable. (``gateway``: deprecated, as above.)"""


@hookspec
def shutdown(host: "PluginHost", gateway: Any) -> Awaitable[None] | None:
    """The gateway is stopping; may return an awaitable. (``gateway``: deprecated, as above.)"""


@hookspec
def supports_edit(stream: Stream) -> bool | Awaitable[bool]:
    """Whether messages in this stream's chat can be edited in place (needs ``on_delta``)."""
    raise NotImplementedError  # a specification: plugins implement it, pluggy never calls this body


@hookspec
def on_stream_start(stream: Stream) -> Awaitable[None] | None:
    """Show (refresh) a typing indicator. Sends no text.

    Called about a second into a reply and again every ``typing_interval``
    seconds while nothing visible happens (before the first text, while a
    tool runs, the whole reply when previews are off); not called when the
    call would hold the reply's first text back (text that comes at once
    needs no indicator). So the other hooks must not depend on it: set up
    per-reply state lazily, in ``stream.state``. Each call is charged to
    the chat's budget.
    """


@hookspec
def on_delta(stream: Stream, message: MessageRef | None, text: str) -> MessageRef | Awaitable[MessageRef]:
    """Show ``text`` (the whole visible text of that one message) in ``message``: a preview.

    When ``message`` is None, send a new message and return its ``MessageRef``.
    A preview is never a message's last call: ``on_stream_end`` follows.
    On an ``append_only`` platform each text extends the previous one.
    """
    raise NotImplementedError  # a specification: plugins implement it, pluggy never calls this body


@hookspec
def on_stream_end(stream: Stream, message: MessageRef | None, text: str) -> MessageRef | Awaitable[MessageRef]:
    """The final text of that message: edit it, or send it when ``message`` is None.

    Every message of a reply ends with exactly this call once its text is
    final — also a message that overflowed into the next one — so a
    platform can finalise it (stop a native stream, apply formatting).
    It may come again for the same message only when the final text had to
    change (post-processing, a reset, a repair after a failed edit). On an
    ``append_only`` platform ``text`` is the whole final text: when it
    does not extend what the message shows, replace the message's content.
    Returns the ``MessageRef`` of the message that now shows ``text``.
    """
    raise NotImplementedError  # a specification: plugins implement it, pluggy never calls this body


@hookspec
def on_media(stream: Stream, media: Media) -> MessageRef | Awaitable[MessageRef]:
    """Send one attachment into the stream's chat as the platform's native media; return its ``MessageRef``.

    Called once per item, in order, after the reply's final text, only for
    items the platform declared it can send (``Platform(media=MediaLimits(...))``):
    ``media.kind`` is one of its ``kinds`` (an image over the image limit but
    within the document limit comes as ``kind="document"``), ``media.size``
    is within its ``max_bytes``, ``media.caption`` fits its ``caption_length``.
    ``media.path`` is a regular file inside the media directory (read it with
    ``media.read()`` or open it); ``media.url`` is set instead only when the
    platform declared ``urls=True``. ``stream.thread_id`` / ``stream.reply_to``
    say where it belongs, as for text.

    Like the text hooks it never sleeps or retries: raise
    ``RateLimited(retry_after)`` on a 429 (the core waits and calls again),
    ``DeliveryError(retryable=True)`` when the same call may work later,
    ``DeliveryError(retryable=False)`` when it never will (the person then
    gets the item's one-line fallback), and ``maybe_delivered=True`` when the
    upload may have landed (a timeout after sending): the core then never
    sends that item again.
    """
    raise NotImplementedError  # a specification: plugins implement it, pluggy never calls this body
