"""The built-in deterministic demo model, served in-process or over HTTP (``demo-llm``).

Its SDK transport (:mod:`.transport`, on the SDK's httpx) is imported where it is used, not here: a demo
gateway on the fast transport never loads httpx or the SDK.
"""

from .endpoint import DemoEndpoint
from .model import DemoReply, plan_reply

__all__ = ["DemoEndpoint", "DemoReply", "plan_reply"]
