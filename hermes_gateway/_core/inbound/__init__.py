"""The inbound runtime: what happens to a message between a platform plugin and the agent."""

from ..messages.incoming import Incoming

__all__ = ["Incoming"]
