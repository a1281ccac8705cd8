"""Conversations that survive a restart: the :class:`ConversationStore` seam and its backends."""

from .base import ConversationKey, ConversationStore

__all__ = ["ConversationKey", "ConversationStore"]
