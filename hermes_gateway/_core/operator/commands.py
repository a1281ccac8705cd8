"""``/model``, ``/persona`` and ``/whoami``: a chat's own model and persona, and who is asking.

``/model`` and ``/persona`` with no argument list what there is and mark
the current one; with a name they switch this chat (stored in the
conversation store: it survives restarts and is shared by replicas); with
``default`` they go back to what the config says. ``/model`` is for admins
by default, ``/persona`` for everyone (``commands.<name>.who``).
"""

from __future__ import annotations

import time

from ..messages.commands import Command, CommandContext
from ..store import StoreError
from .profile import MODEL_SETTING, PERSONA_SETTING, available_models, find_model, find_persona
from .roles import role_of
from ..settings.operator import DEFAULT_WORD
from .store_ops import approve_code, parse_user
from .turns import chat_key, profile_for

_STORE_DOWN = "⚠️ Could not save that just now (the store is unavailable); please try again."


async def _model(ctx: CommandContext) -> str:
    config = ctx.config
    current = await profile_for(ctx.config, ctx.runtime.parts.store(), ctx.incoming)
    name = ctx.args.strip()
    if not name:
        lines = ["Models:"]
        for shown, model in available_models(config).items():
            mark = " ← current" if shown == current.model_name else ""
            lines.append(f"• {shown}{'' if shown == model.endpoint.name else f' ({model.endpoint.name})'}{mark}")
        lines.append(f"/model NAME switches this chat; /model {DEFAULT_WORD} goes back.")
        return "\n".join(lines)
    if name == DEFAULT_WORD:
        value = None
    else:
        found = find_model(config, name)
        if found is None:
            return f"No model {name!r} here. /model lists them."
        value = found[0]
    if not await _save(ctx, MODEL_SETTING, value):
        return _STORE_DOWN
    after = await profile_for(ctx.config, ctx.runtime.parts.store(), ctx.incoming)
    return f"🧠 This chat now uses {after.model_name}."


async def _persona(ctx: CommandContext) -> str:
    config = ctx.config
    personas = config.operator.personas
    current = await profile_for(ctx.config, ctx.runtime.parts.store(), ctx.incoming)
    name = ctx.args.strip()
    if not name:
        if not personas:
            return "No personas are configured."
        lines = ["Personas:"]
        for persona in personas.values():
            mark = " ← current" if persona.name == current.persona else ""
            about = f" — {persona.description}" if persona.description else ""
            lines.append(f"• {persona.name}{about}{mark}")
        if current.persona is None:
            lines.append(f"Current: {DEFAULT_WORD}.")
        lines.append(f"/persona NAME switches this chat; /persona {DEFAULT_WORD} goes back.")
        return "\n".join(lines)
    if name == DEFAULT_WORD:
        if not await _save(ctx, PERSONA_SETTING, None):
            return _STORE_DOWN
        return "🎭 Back to the default persona."
    if find_persona(config, name) is None:
        return f"No persona {name!r} here. /persona lists them."
    if not await _save(ctx, PERSONA_SETTING, name):
        return _STORE_DOWN
    return f"🎭 This chat now talks as {name}."


async def _whoami(ctx: CommandContext) -> str:
    m = ctx.incoming
    lines = [f"platform: {m.platform}", f"user id: {m.sender_id or '(unknown)'}", f"chat id: {m.chat_id}"]
    if m.thread_id:
        lines.append(f"thread id: {m.thread_id}")
    lines.append(f"role: {role_of(ctx.config, m)}")
    return "\n".join(lines)


async def _approve(ctx: CommandContext) -> str:
    typed = ctx.args.strip()
    if not typed:
        return "Usage: /approve CODE (the code the person was given)."
    by = f"{ctx.incoming.platform}:{ctx.incoming.sender_id}"
    try:
        approved = await approve_code(ctx.runtime.parts.store(), typed, by, time.time())
    except StoreError:
        return _STORE_DOWN
    if approved is None:
        return "That code is not valid (wrong, used or expired). Nobody was approved."
    return f"✅ Approved {approved.platform}:{approved.user_id}. Their next message will be answered."


async def _revoke(ctx: CommandContext) -> str:
    typed = ctx.args.strip()
    if not typed:
        return "Usage: /revoke USER (platform:user_id, or a user id on this platform)."
    platform, user = parse_user(typed) or (ctx.incoming.platform, typed)
    try:
        found = await ctx.runtime.parts.store().revoke_user(platform, user)
    except StoreError:
        return _STORE_DOWN
    return f"🚫 Revoked {platform}:{user}." if found else f"{platform}:{user} was not approved."


async def _usage(ctx: CommandContext) -> str:
    from .usage import usage_text

    try:
        return await usage_text(ctx.config, ctx.runtime.parts.store(), ctx.incoming)
    except StoreError:
        return "⚠️ Usage cannot be read just now (the store is unavailable)."


async def _save(ctx: CommandContext, name: str, value: str | None) -> bool:
    try:
        await ctx.runtime.parts.store().set_chat_setting(chat_key(ctx.incoming), name, value)
    except StoreError:
        return False
    return True


def operator_commands() -> tuple[Command, ...]:
    """The commands this package adds to every platform."""
    return (
        Command("model", "list the models, or switch this chat's (/model NAME)", _model, who="admin"),
        Command("persona", "list the personas, or switch this chat's (/persona NAME)", _persona),
        Command("whoami", "your platform, user id, chat id and role", _whoami),
        Command("approve", "let in the person with this pairing code (/approve CODE)", _approve, who="admin"),
        Command("revoke", "take back a user's approval (/revoke USER)", _revoke, who="admin"),
        Command("usage", "tokens (and cost) used in this chat and by you, today and this month", _usage),
    )


