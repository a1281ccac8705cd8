"""``/forget``: an admin clears a group's kept context (the room's recent messages), on every replica at once."""

from __future__ import annotations

from ..messages.commands import Command, CommandContext
from ..store.room_context import room_of


async def _forget(ctx: CommandContext) -> str:
    incoming = ctx.incoming
    if incoming.is_direct:
        return "A one-to-one chat keeps no group context: nothing to forget. (/new starts a new conversation.)"
    store = ctx.runtime.parts.store()
    count = await store.forget_room(room_of(incoming.platform, incoming.chat_id, incoming.thread_id))
    return f"🧹 Forgot this chat's recent messages ({count} kept as context)."


#: Admin-only by default (``commands.forget.who`` may change it): it erases what the whole room said.
FORGET = Command("forget", "forget this group's recent messages (kept as context)", _forget, who="admin")
