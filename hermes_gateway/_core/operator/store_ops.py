"""The few store operations pairing needs, shared by the chat commands, the gate and the CLI."""

from __future__ import annotations

from typing import Any

from ..store.operator_records import Pairing
from . import pairing


async def issue_code(store: Any, incoming: Any, now: float, ttl: float) -> tuple[Pairing, bool]:
    """The user's pending code, or a new one; ``(pairing, True)`` when it was just made."""
    standing = await store.pairing_for(incoming.platform, incoming.sender_id or "", now)
    if standing is not None:
        return standing, False
    made = Pairing(pairing.new_code(), incoming.platform, incoming.sender_id or "", incoming.chat_id, now, now + ttl)
    kept = await store.add_pairing(made)
    return kept, kept.code == made.code


async def approve_code(store: Any, typed: str, by: str, now: float) -> Pairing | None:
    """Approve the user of ``typed`` (any case, dashes and spaces ignored); None for a wrong or expired code."""
    code = pairing.normalize(typed)
    if not code:
        return None
    return await store.redeem_pairing(code, by, now)


def parse_user(text: str) -> tuple[str, str] | None:
    """``platform:user_id`` → its parts (None when it is not of that form)."""
    platform, sep, user = text.strip().partition(":")
    if not sep or not platform or not user:
        return None
    return platform, user
