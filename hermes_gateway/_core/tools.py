"""Tools the agent may call, and collecting them from plugins.

A plugin implements ``register_tools(register)`` and calls
``register(Tool(...))``. A tool is a name, a description the model reads,
a JSON schema for its arguments and a plain callable (sync or async) that
receives the arguments as keyword arguments. Sync tools run in a thread so
a slow one never blocks the event loop that streams replies.

A tool returns text (a ``str``; anything else is shown as JSON), or a
:class:`ToolResult` carrying :class:`~hermes_gateway._core.media.Media` as well:
the model reads the text plus a one-line stand-in per item
(``[image: qr.png attached]``), the person gets the attachments.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from .media import Media, MediaKind, MediaLimits

class RegistrySource(Protocol):
    """What :func:`collect_tools` asks of the plugin manager (:class:`~.plugins.Plugins` is one): tools sit
    beneath the plugin layer, so they name the one method they call instead of importing it."""

    def collect(self, hook_name: str, kind: type["Tool"], what: str,
                config: Any = None) -> Sequence[tuple["Tool", Any]]: ...

log = logging.getLogger(__name__)

__all__ = ["EMPTY_SCHEMA", "Media", "MediaKind", "MediaLimits", "Tool", "ToolResult", "collect_tools",
           "installed_tools"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns when it has media: ``ToolResult(text="done", media=[Media(path=...)])``.

    ``text`` is what the model reads (may be empty); each item of ``media``
    adds its stand-in line for the model and is delivered to the person
    after the reply's text, as an attachment where the platform can.
    A plain ``str`` (or any JSON-able value) is still a fine return value.
    """

    text: str = ""
    media: Sequence[Media] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"ToolResult.text must be a str, got {type(self.text).__name__}")
        if isinstance(self.media, Media):
            object.__setattr__(self, "media", (self.media,))
        items = tuple(self.media)
        for item in items:
            if not isinstance(item, Media):
                raise TypeError(f"ToolResult.media takes hermes_gateway.Media items, got {type(item).__name__}")
        object.__setattr__(self, "media", items)


@dataclass(frozen=True)
class Tool:
    """One callable the model may invoke.

    ``function`` is called as ``function(**arguments)``; it may be ``async``.
    Whatever it returns is shown to the model as text (strings as they are,
    anything else as JSON); a :class:`ToolResult` adds media.
    """

    name: str
    description: str
    function: Callable[..., Any]
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_SCHEMA))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' (OpenAI's rule)")
        if not callable(self.function):
            raise TypeError(f"tool {self.name!r}: function must be callable")
        if not isinstance(self.parameters, Mapping) or self.parameters.get("type", "object") != "object":
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON schema of type 'object'")

    def chat_schema(self) -> dict[str, Any]:
        """The entry for ``tools=`` in a Chat Completions request."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}}

    def responses_schema(self) -> dict[str, Any]:
        """The entry for ``tools=`` in a Responses request (flat, no ``function`` wrapper)."""
        return {"type": "function", "name": self.name, "description": self.description,
                "parameters": dict(self.parameters)}


def collect_tools(plugins: RegistrySource, config: Any = None) -> list[Tool]:
    """Every tool registered through ``register_tools``, first registration of a name wins.

    A plugin whose hook raises, or registers something that is not a
    :class:`Tool`, is reported as a plugin problem; the others still load.
    """
    return [tool for tool, _ in plugins.collect("register_tools", Tool, "tool", config)]


def _no_plugins_loaded() -> list[Tool]:
    return []


#: Where :func:`installed_tools` gets them. The plugin manager (``plugins.py``) sets it when it is imported
#: (``hermes_gateway`` imports it first thing): the tools of the installed plugins.
_installed_tools_source: Callable[[], list[Tool]] = _no_plugins_loaded


def provide_installed_tools(source: Callable[[], list[Tool]]) -> None:
    """Say where :func:`installed_tools` comes from (the plugin manager does, once)."""
    global _installed_tools_source
    _installed_tools_source = source


def installed_tools() -> list[Tool]:
    """The tools the installed plugins register: what ``AIAgent(tools=None)`` offers the model.

    The agent asks here rather than importing the plugin manager: loading the
    plugins imports the API server, which imports the agent.
    """
    return _installed_tools_source()
