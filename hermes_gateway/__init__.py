"""hermes-gateway: stream an LLM agent's replies into chat platforms.

The public API for plugin authors and embedders. Everything not named in
``__all__`` is private and may change.
"""

from .config import Config, load_config
from .errors import ConfigError, DeliveryError, RateLimited
from .events import (StreamEvent, StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd,
                     UsageReport)
from .hookspecs import hookimpl
from .platform import MessageRef, Platform, RateBudget, Stream, StreamSettings
from .plugins import Plugins, make_plugins

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "DeliveryError",
    "MessageRef",
    "Platform",
    "Plugins",
    "RateBudget",
    "RateLimited",
    "Stream",
    "StreamEvent",
    "StreamReset",
    "StreamSettings",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "TurnEnd",
    "UsageReport",
    "hookimpl",
    "load_config",
    "make_plugins",
]
