"""The built-in deterministic demo model, served in-process or over HTTP (``demo-llm``)."""

from .endpoint import DemoEndpoint
from .model import DemoReply, plan_reply
from .transport import DEMO_BASE_URL, DemoTransport, demo_http_client

__all__ = ["DEMO_BASE_URL", "DemoEndpoint", "DemoReply", "DemoTransport", "demo_http_client", "plan_reply"]
