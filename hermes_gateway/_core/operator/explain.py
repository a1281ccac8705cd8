"""``hermes-gateway config --chat PLATFORM:CHAT[:USER]``: one chat's effective settings, and where each came from.

The same resolution a turn uses (:mod:`.profile`, :mod:`.overrides`), fed the
chat's stored ``/model`` and ``/persona`` choices when the store has them, so
what is printed is what the next turn in that chat runs with.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .overrides import overridden
from .profile import resolve, tool_allowed


def parse_chat(spec: str) -> tuple[str, str, str | None] | None:
    """``telegram:-1001:42`` → ``("telegram", "-1001", "42")``; None when it is not of that form."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        return None
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def explain_chat(config: Any, platform: str, chat: str, user: str | None, chat_kind: str | None,
                 chosen: Mapping[str, str], tool_names: Sequence[str]) -> list[str]:
    """The lines ``config --chat`` prints."""
    over = overridden(config, platform, chat, None, user, chat_kind)
    profile = resolve(config, chosen, over)
    who = f", user {user}" if user else ""
    kind = f", {chat_kind}" if chat_kind else " (no --kind: overrides matching chat_kind are left out)"
    lines = [f"# effective settings for {platform}:{chat}{who}{kind}"]
    endpoint = profile.model.endpoint
    shown = profile.model_name if profile.model_name == endpoint.name else f"{profile.model_name} ({endpoint.name})"
    lines.append(f"model: {shown}  # from {profile.origins['model']}")
    lines.append(f"persona: {profile.persona or 'none'}  # from {profile.origins.get('persona', 'default')}")
    prompt = profile.system_prompt
    lines.append(f"system_prompt: {_clip(prompt) if prompt else 'none'}  # from {profile.origins['system_prompt']}")
    allowed = [name for name in tool_names if tool_allowed(profile, name)]
    where = ", ".join(f"{k.split('_')[1]} from {profile.origins[k]}" for k in ("tools_allow", "tools_deny")
                      if k in profile.origins) or "every registered tool"
    lines.append(f"tools: {', '.join(allowed) or 'none'}  # {where}")
    settings, origins = config.explain_streaming(platform)
    parts = []
    for name, value in (("enabled", settings.enabled), ("edit_interval", settings.edit_interval),
                        ("min_tokens", settings.min_tokens)):
        key = f"streaming.{name}"
        if key in over.values:
            value, origin = over.values[key], over.origins[key]
        else:
            origin = origins[name]
        parts.append(f"{name} {_word(value)} (from {origin})")
    lines.append(f"streaming: {'; '.join(parts)}")
    busy = over.get("busy") or config.conversation.busy
    busy_from = over.origins.get("busy") or config.origins.get("conversation.busy", "default")
    lines.append(f"conversation.busy: {busy}  # from {busy_from}")
    if user:
        admin = config.operator.access.is_admin(platform, user)
        lines.append(f"role: {'admin  # from access.admins' if admin else 'everyone'}")
    return lines


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _clip(text: str, limit: int = 70) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[:limit - 1] + "…")
