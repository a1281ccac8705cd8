"""Chat commands: ``/new``, ``/stop``, ``/help`` on every platform, plus what plugins add.

A command is recognised by the core, not by each platform: ``/name`` or
``/name@bot_name`` at the start of a message, with the platform's declared
``Platform.command_prefix`` in place of ``/`` (``!new`` on Matrix, whose
clients take ``/new`` for themselves). ``/name@other_bot`` in a
group is someone else's and is ignored. An unknown ``/word`` is ordinary
text for the model (people type paths and smileys too). What a command is
(:class:`~..messages.commands.Command`) lives beneath every part that
defines some (the operator's, the reminders').
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..messages.commands import Command, CommandContext
from ..messages.incoming import Incoming

_COMMAND = r"^{prefix}([A-Za-z0-9_]{{1,32}})(?:@([A-Za-z0-9_.-]{{1,64}}))?(?:\s+(.*))?\Z"


@lru_cache(maxsize=16)
def _command_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(_COMMAND.format(prefix=re.escape(prefix)), re.DOTALL)


@dataclass(frozen=True)
class ParsedCommand:
    name: str
    target: str | None
    args: str


def parse_command(text: str, prefix: str = "/") -> ParsedCommand | None:
    """``/name@target args`` (``prefix`` for ``/``) -> its parts; None when the text is not shaped like a command."""
    match = _command_pattern(prefix).match(text.strip())
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

    config = ctx.config
    prefix = ctx.runtime.command_prefix(ctx.incoming.platform)  # "!" on Matrix: what the person types there
    lines = ["Commands:"] + [f"{prefix}{c.name} — {c.help}" for c in ctx.runtime.commands.values()
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
