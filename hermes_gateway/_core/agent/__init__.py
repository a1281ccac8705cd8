"""The agent: talks to OpenAI-compatible upstreams, runs tools, yields typed events.

See :class:`AIAgent`.
"""

from .core import AIAgent

__all__ = ["AIAgent"]
