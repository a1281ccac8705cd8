"""What a chat command is: a name, a help line, a handler, who may run it; and what its handler gets.

Plain types beneath every part that defines commands (the inbound
runtime's ``/new`` ``/stop`` ``/help``, the operator's ``/model`` and kin,
the reminders' ``/reminders``, a plugin's ``register_commands``), so none
of them imports the inbound runtime for them. Recognising and running
commands is the runtime's (:mod:`hermes_gateway._core.inbound.commands`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Protocol

from .incoming import Incoming


class CommandRuntime(Protocol):
    """What a command acts on: the inbound runtime, as the commands see it (declared here, beneath it, so this
    module imports nothing above it)."""

    config: Any
    #: what a turn uses (``conversation.TurnParts``: the store, the approvals ...), for the core's own commands
    parts: Any
    legacy_gateway: Any

    @property
    def commands(self) -> Mapping[str, "Command"]: ...

    def command_prefix(self, platform: str) -> str: ...

    async def new_conversation(self, incoming: Incoming) -> None: ...


@dataclass(frozen=True)
class CommandContext:
    """What a command handler gets: the message, its arguments, and the runtime to act on the chat."""

    incoming: Incoming
    args: str
    runtime: CommandRuntime
    stopped_reply: bool = False  # a reply was running and this command stopped it

    @property
    def config(self) -> Any:
        """The gateway's configuration (``hermes_gateway.Config``)."""
        return self.runtime.config

    @property
    def gateway(self) -> Any:
        """Deprecated: the private gateway. Use ``ctx.config``, ``ctx.incoming`` and ``ctx.args``."""
        warnings.warn("CommandContext.gateway is deprecated and removed in the next release: use ctx.config, "
                      "ctx.incoming and ctx.args", DeprecationWarning, stacklevel=2)
        return self.runtime.legacy_gateway


#: A handler returns the text to answer with (None: answer nothing).
CommandHandler = Callable[[CommandContext], Awaitable[str | None]]


@dataclass(frozen=True)
class Command:
    """One chat command. ``stops_reply`` commands act at once on a running reply (``/stop``,
    ``/new``); the others wait their turn behind it, like any message."""

    name: str
    help: str
    run: CommandHandler
    stops_reply: bool = False
    #: Who may run it: ``"everyone"`` or ``"admin"`` (``access.admins``); ``commands.<name>.who`` overrides it.
    who: str = "everyone"

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9_]{1,32}", self.name):
            raise ValueError(f"command name {self.name!r}: 1-32 lower-case letters, digits or _ (no slash)")
        if self.who not in ("everyone", "admin"):
            raise ValueError(f"command /{self.name}: who must be 'everyone' or 'admin', got {self.who!r}")
