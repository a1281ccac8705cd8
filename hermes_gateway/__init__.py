"""hermes-gateway: stream an LLM agent's replies into chat platforms.

The public API for plugin authors and embedders. Everything not named in
``__all__`` is private and may change.
"""

from ._core.messages.choice import Choice, ChoiceAnswer, ChoiceOption
from ._core.config import Config, load_config
from ._core.errors import ConfigError, DeliveryError, HermesError, RateLimited, StartError
from ._core.events import (StreamEvent, StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd,
                     UsageReport)
from ._core.hookspecs import hookimpl
from ._core.messages.commands import Command, CommandContext
from ._core.messages.attachments import Attachment, FetchError
from ._core.messages.incoming import Incoming
from ._core.messages.shared import forwarded_text, location_text
from ._core.inbound.stream_download import stream_download
from ._core.markdown_spans import markdown_keep_whole
from ._core.media import Media, MediaLimits
from ._core.platform import MessageRef, Platform, RateBudget, Stream, StreamSettings, appended
from ._core.plugin_helpers import (protect_secret, protect_secret_shape, scrub_secrets, split_markdown,
                                  utf8_length, utf16_length)
from ._core.platform_context import PlatformClient, PlatformContext
from ._core.catch_up_task import CatchUpTask
from ._core.last_seen import LastSeen
from ._core.plugin_host import PluginHost
from ._core.platform_settings import SettingsError, secret, setting
from ._core.plugins import Plugins, installed_plugins, make_plugins
from ._core.tables import TableLayout, has_table, layout_table, render_table, rewrite_tables
from ._core.tools import Tool, ToolResult

__version__ = "0.2.0"

__all__ = [
    "AIAgent",
    "Attachment",
    "Choice",
    "ChoiceAnswer",
    "ChoiceOption",
    "Command",
    "CommandContext",
    "CatchUpTask",
    "Config",
    "ConfigError",
    "DeliveryError",
    "FetchError",
    "HermesError",
    "Incoming",
    "LastSeen",
    "Media",
    "MediaLimits",
    "MessageRef",
    "Platform",
    "PlatformClient",
    "PlatformContext",
    "PluginHost",
    "Plugins",
    "RateBudget",
    "RateLimited",
    "SettingsError",
    "StartError",
    "Stream",
    "StreamEvent",
    "StreamReset",
    "StreamSettings",
    "TableLayout",
    "TextDelta",
    "Tool",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolResult",
    "TurnEnd",
    "UsageReport",
    "appended",
    "hookimpl",
    "forwarded_text",
    "has_table",
    "installed_plugins",
    "layout_table",
    "load_config",
    "location_text",
    "make_plugins",
    "markdown_keep_whole",
    "protect_secret",
    "protect_secret_shape",
    "render_table",
    "rewrite_tables",
    "scrub_secrets",
    "secret",
    "setting",
    "split_markdown",
    "stream_download",
    "utf8_length",
    "utf16_length",
]


def __getattr__(name: str) -> object:
    # AIAgent pulls in the openai SDK; import it only when asked for, so the CLI starts fast.
    if name == "AIAgent":
        from ._core.agent import AIAgent
        return AIAgent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
