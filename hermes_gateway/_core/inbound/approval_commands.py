"""``/allow ID`` and ``/deny ID``: answering an approval question by typing, where there are no buttons.

(``/approve CODE`` is pairing's, issue 23; these names do not clash with it.)
They are run at once, beside the chat's lane: the reply they answer is
running in that lane, waiting for them.
"""

from __future__ import annotations

from ..approvals.desk import APPROVE, DENY
from ..messages.commands import Command, CommandContext

NAMES = ("allow", "deny")


async def _answer(ctx: CommandContext, option: str) -> str:
    question_id = ctx.args.strip().split()[0] if ctx.args.strip() else ""
    if not question_id:
        return f"Usage: /{'allow' if option == APPROVE else 'deny'} ID (the id the approval question shows)."
    incoming = ctx.incoming
    return await ctx.runtime.parts.approvals().answer(incoming.platform, incoming.chat_id, incoming.sender_id or "",
                                                      question_id, option)


async def _allow(ctx: CommandContext) -> str:
    return await _answer(ctx, APPROVE)


async def _deny(ctx: CommandContext) -> str:
    return await _answer(ctx, DENY)


APPROVAL_COMMANDS: tuple[Command, ...] = (
    Command("allow", "approve a tool the assistant wants to run: /allow ID", _allow),
    Command("deny", "refuse a tool the assistant wants to run: /deny ID", _deny),
)
