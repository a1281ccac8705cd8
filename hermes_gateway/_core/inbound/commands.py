"""Chat commands: ``/new``, ``/stop``, ``/help`` on every platform, plus what plugins add.

A command is recognised by the core, not by each platform: ``/name`` or
``/name@bot_name`` at the start of a message. ``/name@other_bot`` in a
group is someone else's and is ignored. An unknown ``/word`` is ordinary
text for the model (people type paths and smileys too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..messages.incoming import Incoming

if TYPE_CHECKING:
    from .runtime import InboundRuntime

_COMMAND = re.compile(r"^/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_.-]{1,64}))?(?:\s+(.*))?\Z", re.DOTALL)


@dataclass(frozen=True)
class CommandContext:
    """What a command handler gets: the message, its arguments, and the runtime to act on the chat."""

    incoming: Incoming
    args: str
    runtime: "InboundRuntime"
    stopped_reply: bool = False  # a reply was running and this command stopped it

    @property
    def gateway(self) -> Any:
        return self.runtime.gateway


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


@dataclass(frozen=True)
class ParsedCommand:
    name: str
    target: str | None
    args: str


def parse_command(text: str) -> ParsedCommand | None:
    """``/name@target args`` -> its parts; None when the text is not shaped like a command."""
    match = _COMMAND.match(text.strip())
    if match is None:
        return None
    return ParsedCommand(match.group(1).lower(), match.group(2), (match.group(3) or "").strip())


def meant_for_us(parsed: ParsedCommand, incoming: Incoming) -> bool:
    """``/help@other_bot`` is not ours; ``/help`` and ``/help@us`` are."""
    if parsed.target is None or incoming.bot_name is None:
        return True
    return parsed.target.lower().lstrip("@") == incoming.bot_name.lower().lstrip("@")


# ---------------------------------------------------------------- the built-in commands


async def _new(ctx: CommandContext) -> str:
    await ctx.runtime.new_conversation(ctx.incoming)
    return "✨ New conversation. What shall we talk about?"


async def _stop(ctx: CommandContext) -> str:
    return "⏹ Stopped." if ctx.stopped_reply else "Nothing to stop."


async def _help(ctx: CommandContext) -> str:
    from ..operator.roles import may_run  # /help lists only what the asking person may run

    config = ctx.runtime.gateway.config
    lines = ["Commands:"] + [f"/{c.name} — {c.help}" for c in ctx.runtime.commands.values()
                             if may_run(config, ctx.incoming, c)]
    lines.append("Anything else is a message for the assistant.")
    return "\n".join(lines)


async def _notice(ctx: CommandContext) -> str:
    return ctx.args


#: Not a command anyone types: how the core answers a message that carries only a ``notice``.
NOTICE = Command("notice", "a fixed answer to a message the model cannot read", _notice)

BUILTIN_COMMANDS: tuple[Command, ...] = (
    Command("new", "start a new conversation (forget this one)", _new, stops_reply=True),
    Command("stop", "stop the reply being written", _stop, stops_reply=True),
    Command("help", "list the commands", _help),
)
