"""Status reactions on Telegram: ``setMessageReaction`` with one emoji from the bots' fixed list.

A bot has one reaction per message, so setting 👍 replaces the 👀 it set
before. Only the 73 emoji of ``telegram.constants.ReactionEmoji`` are
accepted (python-telegram-bot sends any other string as a custom emoji id,
which Telegram refuses): the core checks ``reactions:`` against
:data:`REACTION_EMOJI` when the client is built. Telegram does not document
a reaction rate limit; the core counts each like an edit, against the chat's
budget, and a 429 arrives as :class:`~hermes_gateway.RateLimited`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hermes_gateway import DeliveryError

if TYPE_CHECKING:
    from .client import TelegramClient


@lru_cache(maxsize=1)
def reaction_emoji() -> frozenset[str]:
    """Every emoji a bot may react with (read from python-telegram-bot when first asked: importing this
    module, or the emulator, does not import the SDK)."""
    try:
        from telegram.constants import ReactionEmoji
    except ImportError:  # no SDK: nothing can be sent anyway (the client says how to fix it)
        return frozenset()
    return frozenset(str(e.value) for e in ReactionEmoji)


async def set_reaction(client: "TelegramClient", chat_id: str, message_id: str, emoji: str) -> Any:
    """Set the bot's reaction on one message (a person's) in a chat, following a group's migration."""
    from telegram import ReactionTypeEmoji

    from .errors import translate

    try:
        mid = int(message_id)
    except ValueError:
        raise DeliveryError(f"telegram: message id {message_id!r} is not a number", retryable=False) from None
    try:
        return await client.bot.set_message_reaction(chat_id=client.chat_for(str(chat_id)), message_id=mid,
                                                     reaction=[ReactionTypeEmoji(emoji)])
    except DeliveryError:
        raise
    except Exception as exc:
        raise translate(exc, "setMessageReaction") from None
