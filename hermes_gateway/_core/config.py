"""Loading ``config.yaml`` into typed settings, with one-line errors.

Precedence for the streaming decision, highest first: the API client's own
``stream`` field (decided by the API server, not here); the per-platform key
under ``streaming``; the master switch ``streaming.enabled``, replaced by
``HERMES_STREAMING_ENABLED`` when that is set; default off.

Every problem raises :class:`ConfigError`, whose text names the file, the
key and what was expected, so ``main`` can print one line and exit. None is
silent: the file is UTF-8 (or UTF-8/16/32 with a byte-order mark, as Windows
writes it); a key written twice is refused; ``${NAME}`` must be set and
``${NAME:-default}`` falls back like the shell; every unset variable is
named in one line; a ``base_url`` must be an http(s) URL; API keys lose
surrounding whitespace (``$(cat key.txt)``'s newline) but may not contain
any; a list element is named by index (``api_server.api_keys[2]``); a
fallback names a real endpoint or says ``demo``. Names under ``platforms:``
and ``streaming:`` are checked later, once plugins are loaded
(``config_check.py``), since only plugins know which platforms exist.
"""

from __future__ import annotations

import codecs
import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

import yaml

from .errors import ConfigError, HermesError
from .masking import mask_url
from .settings.model import Endpoint as Endpoint, ModelConfig as ModelConfig, Timeouts as Timeouts
from .approval_policy import API_APPROVALS, ToolsConfig, parse_tools
from .settings.mcp import MCP_KEY, McpServerSettings, parse_mcp_servers
from .settings.reactions import ReactionSettings, parse_reactions
from .settings.logs import LoggingSettings, parse_logging
from .settings.telemetry import TelemetrySettings, parse_telemetry
from .settings.operator import OPERATOR_KEYS, OperatorSettings, parse_operator_sections
from .settings.numbers import NumberError, parse_number
from .settings.outbound import OUTBOUND_KEYS, OutboundSettings, parse_outbound_sections
from .settings.hooks import HOOKS_KEY, HookSettings, parse_hooks
from .settings.groups import GROUPS_KEY, GroupSettings, parse_groups
from .platform import StreamSettings
from .settings.rate_limits import parse_rate_limits

ENV_CONFIG = "HERMES_CONFIG"
ENV_STREAMING = "HERMES_STREAMING_ENABLED"
TRUE_WORDS = {"true", "1", "yes", "on"}
FALSE_WORDS = {"false", "0", "no", "off"}
DEFAULT_PATHS = (Path("config.yaml"), Path("~/.hermes/config.yaml"))
#: Seconds in an hour and a day: the upper ends of most durations' ranges (every number has one: NumberKey).
HOUR, DAY = 3600, 86_400
#: ``api_server.workers`` at most (a typo such as 1000 is refused rather than forking a thousand processes).
MAX_WORKERS = 64

TOP_LEVEL_KEYS = ("model", "streaming", "platforms", "api_server", "conversation", "store", "coordination", "media",
                  "voice", "reactions", "web", "logging", "telemetry", *OPERATOR_KEYS, MCP_KEY, *OUTBOUND_KEYS, HOOKS_KEY,
                  GROUPS_KEY)
ENV_HOME = "HERMES_HOME"
#: ``${...}`` in a value; the inside must be ``NAME`` or ``NAME:-default`` (the shell's forms).
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_VAR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
#: ``fallback: [demo]``: the one way to name the built-in demo model as a fallback.
DEMO_WORD = "demo"
#: A ``platforms:`` entry that names its plugin's platform (an account, ``support: {platform: telegram}``).
_ACCOUNT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
#: ``model.transport`` values (agent/transport.py), the default first.
TRANSPORTS = ("fast", "sdk")


@dataclass(frozen=True)
class StreamingConfig:
    """``streaming``: the master switch, defaults, and per-platform overrides."""

    enabled: bool = False
    edit_interval: float = 1.5
    min_tokens: int = 20
    cursor: str = " ▌"
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


#: ``api_server.gateway_tools``: when an API turn offers the gateway's own tools beside the client's.
GATEWAY_TOOLS = ("auto", "always", "never")


@dataclass(frozen=True)
class ApiServerConfig:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8642
    api_keys: tuple[str, ...] = ()
    allow_unauthenticated: bool = False
    max_body_bytes: int = 4 * 1024 * 1024
    tool_progress_events: bool = False
    model_name: str = "hermes-gateway"
    keepalive_interval: float = 15.0  # seconds of silence before an SSE ": ping" comment; 0 = never
    cors_origins: tuple[str, ...] = ()  # browser origins allowed to call /v1 directly ("*" = any); none = no CORS
    expose_reasoning: bool = False  # send the model's reasoning as reasoning_content on Chat Completions
    max_concurrent_streams: int = 1000  # SSE streams open at once; beyond it a 429 with Retry-After
    approvals: str = "deny"  # a tool under tools.approval.require, in an API turn: "deny" or "allow" (nobody to ask)
    workers: int = 1  # processes serving the listener (SO_REUSEPORT); "auto" in the file = os.cpu_count()
    gateway_tools: str = "auto"  # the gateway's own tools in API turns: auto (when the client brings none), always, never
    extra_params: tuple[str, ...] = ()  # request fields beyond OpenAI's that are passed to the upstream as they are


@dataclass(frozen=True)
class WebConfig:
    """``web``: the browser console at ``/ui`` on the API server's listener (:mod:`.web`).

    ``enabled`` None means "decide from the listener": on for a loopback
    ``api_server.host``, otherwise only when someone can sign in (a
    ``password`` or ``api_server.api_keys``) — a console open to a network
    with nobody able to sign in would be useless, and one open without a
    password would be a hole. See :meth:`Config.web_enabled`.
    """

    enabled: bool | None = None
    password: str | None = None  # a secret: masked by `config`, registered with the log scrubber
    session_hours: float = 12.0  # a signed-in browser stays signed in this long without activity
    #: Reverse proxies (IPs or networks, normalised: ``127.0.0.1/32``) whose ``X-Forwarded-For`` names the client.
    trusted_proxies: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show the password
        return (f"WebConfig(enabled={self.enabled!r}, password={'<set>' if self.password else None}, "
                f"session_hours={self.session_hours!r}, trusted_proxies={self.trusted_proxies!r})")


#: The web console streams by default, fast (a browser has no rate limit); ``streaming.web`` overrides each.
WEB_STREAMING_ENABLED, WEB_EDIT_INTERVAL, WEB_MIN_TOKENS = True, 0.05, 1


@dataclass(frozen=True)
class ConversationConfig:
    """``conversation``: how the inbound runtime treats a chat (the same on every platform)."""

    busy: str = "queue"            # a message arriving while a reply runs: "queue" or "interrupt"
    shutdown_grace: float = 5.0    # seconds running replies get to finish when the gateway stops
    typing_interval: float = 4.5   # seconds between typing indicators while nothing visible happens
    dedupe_window: int = 10_000    # how many recent update ids are remembered per platform
    on_edit: str = "answer"        # a person edits a message: "answer" the edited text, or "ignore" edits
    after_crash: str = "note"      # a reply a crash cut: "note" (say so, once) or "retry" (answer again, once)
    catch_up: str = "answer"       # messages sent while the gateway was down (Discord, Slack): "answer" or "skip"
    catch_up_window: float = 3600.0  # ... in chats with a conversation active within this many seconds


@dataclass(frozen=True)
class StoreConfig:
    """``store``: where conversations live. Default: an SQLite file in the data directory."""

    path: str | None = None        # an SQLite file; default <data dir>/state.db (data dir: $HERMES_HOME or ~/.hermes)
    url: str | None = None         # sqlite:///path, or postgresql://user@host/dbname (several replicas share it)
    history_messages: int = 40     # at most this many messages of a conversation go to the model
    history_chars: int = 60_000    # ... and at most about this many characters of them
    history_images: int = 2        # images a person sent are re-sent to the model for this many latest turns


@dataclass(frozen=True)
class CoordinationConfig:
    """``coordination``: what several replicas of one bot share. Default: nothing (one replica, in-process)."""

    url: str | None = None         # redis://[:password@]host:port/db, rediss://..., unix:///path.sock
    lease_ttl: float = 15.0        # seconds; a dead replica's chat is free after this
    dedupe_ttl: int = 86_400       # seconds an update id is remembered

    @property
    def display_url(self) -> str | None:
        return mask_url(self.url) if self.url else None


#: ``media.inbound_max_bytes`` defaults, under each platform's own caps (Telegram's bots download <= 20 MB).
INBOUND_MAX_BYTES: Mapping[str, int] = {
    "image": 20 * 1024 * 1024, "document": 20 * 1024 * 1024, "audio": 25 * 1024 * 1024,
    "voice": 25 * 1024 * 1024, "video": 50 * 1024 * 1024, "sticker": 5 * 1024 * 1024,
}
#: The largest size a ``media`` byte count may say (far past any platform's file limit).
MAX_SIZE = 64 * 1024 ** 3
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?\s*", re.IGNORECASE)
#: KB/MB/GB are binary, as chat apps show sizes (and as the person's "too large" line shows them).
_UNITS = {None: 1, "b": 1, "kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3,
          "kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3}


@dataclass(frozen=True)
class MediaConfig:
    """``media``: where files that replies attach live, and how the API server hands them out."""

    directory: str | None = None   # default <data dir>/media; a tool's file outside it is never sent
    url_ttl: float = 600.0         # seconds a /v1/media/{token} link of the API server stays valid
    inline_max_bytes: int = 0      # the API server inlines items up to this size as data: URLs (0 = never)
    keep_days: float = 7.0         # files the gateway wrote there are removed after this long (0 = never)
    public_url: str | None = None  # the address clients reach the API at (behind a proxy); default: as they reached it
    #: the largest file a person may send, per kind, in bytes: checked before and while downloading
    inbound_max_bytes: Mapping[str, int] = field(default_factory=lambda: dict(INBOUND_MAX_BYTES))
    image_max_side: int = 1568     # images a person sends are downscaled to this longest side (pixels)
    document_max_chars: int = 20_000  # at most this much of a document's text goes into the prompt
    max_image_pixels: int = 50_000_000  # an image with more pixels (read from its header) is refused undecoded
    max_concurrent_decodes: int | None = None  # images decoded, PDF readers run at once in the process (None: cores)
    pdf_timeout: float = 30.0      # seconds to open one PDF, and as many to read its pages (its reader is then ended)
    pdf_max_pages: int = 200       # pages of one PDF read at most
    pdf_empty_pages: int = 20      # reading a PDF stops after this many pages in a row without text
    pdf_memory_mb: int = 512       # the PDF reader process's address space, in MiB
    upload_queue_files: int = 20   # files uploaded in the web chat waiting for their turn, per chat (then 429)
    upload_queue_bytes: int = 200 * 1024 * 1024  # and their bytes (spooled to disk meanwhile), per chat

    def path(self, env: Mapping[str, str] | None = None) -> Path:
        """The media directory (``~`` expanded; default ``$HERMES_HOME/media``)."""
        return Path(self.directory).expanduser() if self.directory else data_dir(env) / "media"

    @property
    def keep_seconds(self) -> float:
        return self.keep_days * 86400.0


@dataclass(frozen=True)
class VoiceEndpoint:
    """``voice.transcription`` / ``voice.speech``: an OpenAI-compatible audio endpoint (OpenAI, Groq, a local
    whisper or TTS server). ``base_url`` unset: none configured (speech then uses the built-in eSpeak NG)."""

    base_url: str | None = None
    api_key: str | None = None
    model: str = ""
    voice: str | None = None       # speech only: the voice (default alloy on an endpoint, en-us built in)
    language: str | None = None    # transcription only: an ISO-639-1 hint (e.g. en), else the server guesses
    timeout: float = 60.0

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    @property
    def display_url(self) -> str | None:
        return mask_url(self.base_url) if self.base_url else None

    def __repr__(self) -> str:  # never show the key, nor credentials in the URL
        return (f"VoiceEndpoint(base_url={self.display_url!r}, model={self.model!r}, "
                f"api_key={'set' if self.api_key else 'unset'})")


VOICE_REPLIES = ("never", "when_voice", "always")


@dataclass(frozen=True)
class VoiceConfig:
    """``voice``: voice notes in (transcribed before the turn) and voice replies out.

    ``transcription``: where voice notes and audio files become text (no
    offline engine measured good enough to be the default: bench/README.md).
    ``speech``: where voice replies are spoken; without a ``base_url`` the
    built-in eSpeak NG speaks them (the ``espeakng-loader`` wheel bundles it).
    ``show_transcript``: the chat also shows what was heard, quoted, before
    the reply. ``reply``: ``never``, ``when_voice`` (answering a voice note)
    or ``always`` — a voice note of the final text follows the text, spoken
    by ``speech``. ``max_seconds``: audio beyond this is not transcribed.
    """

    transcription: VoiceEndpoint = field(default_factory=lambda: VoiceEndpoint(model="whisper-1"))
    speech: VoiceEndpoint = field(default_factory=lambda: VoiceEndpoint(model="tts-1"))
    show_transcript: bool = False
    reply: str = "never"
    max_seconds: float = 600.0


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where hermes keeps its files: ``$HERMES_HOME``, else ``~/.hermes``."""
    env = os.environ if env is None else env
    home = env.get(ENV_HOME)
    return Path(home).expanduser() if home else Path("~/.hermes").expanduser()


@dataclass(frozen=True)
class Config:
    """The whole effective configuration plus where each value came from."""

    model: ModelConfig = field(default_factory=ModelConfig)
    streaming: StreamingConfig = field(default_factory=StreamingConfig)
    platforms: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    api_server: ApiServerConfig = field(default_factory=ApiServerConfig)
    conversation: ConversationConfig = field(default_factory=ConversationConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    coordination: CoordinationConfig = field(default_factory=CoordinationConfig)
    media: MediaConfig = field(default_factory=MediaConfig)
    #: ``models``, ``personas``, ``access``, ``commands``: one bot for many people (:mod:`.operator`).
    operator: OperatorSettings = field(default_factory=OperatorSettings)
    voice: VoiceConfig = field(default_factory=VoiceConfig)
    #: ``mcp_servers``: where tools from MCP servers come from (:mod:`.mcp`).
    mcp_servers: tuple[McpServerSettings, ...] = ()
    #: ``reactions``: status reactions on the person's message (issue 24; :mod:`.reactions`).
    reactions: ReactionSettings = field(default_factory=ReactionSettings)
    #: ``schedules``, ``tools.reminders``, ``reminders``: the gateway speaking first (:mod:`.outbound`).
    outbound: OutboundSettings = field(default_factory=OutboundSettings)
    #: ``hooks``: webhooks from outside that start a turn in a chat (issue 38; :mod:`.outbound.hooks`).
    hooks: tuple[HookSettings, ...] = ()
    #: ``groups``: the room's context kept in groups, and other bots (issue 38; :mod:`.groups`).
    groups: GroupSettings = field(default_factory=GroupSettings)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    web: WebConfig = field(default_factory=WebConfig)
    #: ``logging``: text or JSON lines, and the level (:mod:`.settings.logs`).
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    #: ``telemetry``: OpenTelemetry traces over OTLP/HTTP, off unless an endpoint is set (:mod:`.settings.telemetry`).
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    source: str = "(defaults)"
    env_streaming: bool | None = None
    origins: Mapping[str, str] = field(default_factory=dict)
    #: key -> environment variables it uses that are not set; only ever non-empty with
    #: ``load_config(allow_unset_env=True)`` (what ``hermes-gateway config`` shows).
    missing_env: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def streaming_for(self, platform: str) -> StreamSettings:
        """The effective streaming settings for ``platform`` (client's ``stream`` aside)."""
        return self.explain_streaming(platform)[0]

    def explain_streaming(self, platform: str) -> tuple[StreamSettings, dict[str, str]]:
        """Settings for ``platform`` and where each came from: file, env or default."""
        s = self.streaming
        enabled, where = s.enabled, self.origins.get("streaming.enabled", "default")
        if self.env_streaming is not None:
            enabled, where = self.env_streaming, f"env {ENV_STREAMING}"
        interval = s.edit_interval
        interval_from = self.origins.get("streaming.edit_interval", "default")
        min_tokens = s.min_tokens
        min_from = self.origins.get("streaming.min_tokens", "default")
        override = s.overrides.get(platform)
        if platform == "web":  # the console's own defaults, each replaced by a key under streaming.web
            enabled, where = WEB_STREAMING_ENABLED, "default (web console)"
            interval, interval_from = WEB_EDIT_INTERVAL, "default (web console)"
            min_tokens, min_from = WEB_MIN_TOKENS, "default (web console)"
        if override is not None:
            key = f"streaming.{platform}"
            if "enabled" in override:
                enabled, where = bool(override["enabled"]), f"{self.source} ({key})"
            if "edit_interval" in override:
                interval, interval_from = float(override["edit_interval"]), f"{self.source} ({key}.edit_interval)"
            if "min_tokens" in override:
                min_tokens, min_from = int(override["min_tokens"]), f"{self.source} ({key}.min_tokens)"
        transport = override.get("transport") if override is not None else None
        settings = StreamSettings(enabled=enabled, edit_interval=interval, min_tokens=min_tokens, cursor=s.cursor,
                                  transport=transport)
        return settings, {"enabled": where, "edit_interval": interval_from, "min_tokens": min_from}

    def platform_enabled(self, name: str, default: bool = False) -> bool:
        section = self.platforms.get(name)
        if section is None:
            return self.web_enabled if name == "web" else default  # the console's chat follows `web`
        return bool(section.get("enabled", True))

    @property
    def web_enabled(self) -> bool:
        """Whether ``/ui`` is served: ``web.enabled`` when set; otherwise on with ``web.password``, and with
        the API server's listener when it is loopback or someone can sign in (``api_server.api_keys``).
        Off by default with several workers (its sessions and chats live in one process)."""
        if self.web.enabled is not None:
            return self.web.enabled
        api = self.api_server
        if api.workers > 1:
            return False
        if self.web.password:
            return True
        # no password: the listener must run anyway, and be loopback or need a key
        return api.enabled and (is_loopback_host(api.host) or bool(api.api_keys))


def is_loopback_host(host: str) -> bool:
    """``127.0.0.1``, ``::1``, ``localhost`` (and the rest of 127/8): only this machine can connect."""
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def find_config_path(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """``--config``, then ``$HERMES_CONFIG``, then ``./config.yaml``, then ``~/.hermes/config.yaml``."""
    if explicit:
        return Path(explicit)
    if os.environ.get(ENV_CONFIG):
        return Path(os.environ[ENV_CONFIG])
    for candidate in DEFAULT_PATHS:
        path = candidate.expanduser()
        if path.is_file():
            return path
    return None


def load_config(path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                search: bool = True, allow_unset_env: bool = False) -> Config:
    """Read and validate a config file; with no file, the defaults (demo model).

    ``allow_unset_env=True`` (for ``hermes-gateway config``) leaves a value whose
    environment variable is not set out instead of failing, and records it in
    ``Config.missing_env``, so the rest can still be shown.
    """
    env = os.environ if env is None else env
    resolved = find_config_path(path) if search else (Path(path) if path else None)
    if resolved is None:
        return parse_config({}, source="(defaults)", env=env)
    source = str(resolved)
    try:
        raw = resolved.read_bytes()
    except FileNotFoundError:
        raise ConfigError(source, "(file)", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(source, "(file)", "a file, got a directory") from None
    except OSError as exc:
        raise ConfigError(source, "(file)", f"cannot be read ({exc.strerror})") from None
    text = decode_config_bytes(raw, source)
    try:
        data = _load_yaml(text)
    except _TooManyValues as exc:
        raise ConfigError(source, "(yaml)", f"at most {exc.limit:,} values once aliases (*name) are expanded "
                                            "(an alias bomb?)") from None
    except _DuplicateKey as exc:
        raise ConfigError(source, f"line {exc.line}", f"each key once; {exc.key!r} is already set at line "
                                                      f"{exc.first_line} (a duplicate would silently win)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(yaml)"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(source, where, f"valid YAML ({problem})") from None
    if data is None:
        data = {}
    return parse_config(data, source=source, env=env, allow_unset_env=allow_unset_env)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_config_bytes(raw: bytes, source: str) -> str:
    """UTF-8; or UTF-8/16/32 announced by a byte-order mark (what Windows editors and PowerShell write).

    Anything else is one line naming the file, where the first bad byte is, and what to do.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                raise ConfigError(source, "(file)", f"text in the encoding its byte-order mark announces "
                                                    f"({codec.replace('-sig', '')}); it is not: save it as UTF-8") from None
    if b"\x00" in raw:  # never in a YAML file; every other character of ASCII text in UTF-16
        raise ConfigError(source, "(file)", "UTF-8 text; it looks like UTF-16 without a byte-order mark "
                                            "(save it as UTF-8)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(source, f"line {line}, column {column}",
                          f"UTF-8 text; byte 0x{raw[exc.start]:02x} is not UTF-8 (Latin-1 or Windows-1252?): "
                          "save the file as UTF-8") from None


#: A config file never holds this many values; past it, aliases are being used to multiply the document.
MAX_YAML_VALUES = 100_000


class _TooManyValues(HermesError, yaml.YAMLError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} values")
        self.limit = limit


def _load_yaml(text: str) -> Any:
    """``yaml.load`` with the document's size bounded *as expanded*.

    Aliases let a few lines stand for billions of values ("billion laughs"):
    PyYAML composes them as shared nodes in no time, but building and then
    walking the config would not end. So the node graph is measured first,
    each alias counted in full, and refused past :data:`MAX_YAML_VALUES`.
    """
    loader = _UniqueKeyLoader(text)  # noqa: S506 (a SafeLoader that refuses duplicate keys)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, MAX_YAML_VALUES) > MAX_YAML_VALUES:
            raise _TooManyValues(MAX_YAML_VALUES)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes ``root`` stands for with every alias expanded (counting stops just past ``limit``)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        sizes[id(node)] = min(limit + 1, 1 + sum(sizes[id(child)] for child in children))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _DuplicateKey(HermesError, yaml.YAMLError):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line, self.first_line = key, line, first_line


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, except that a key written twice in one mapping is an error, not "last wins".

    Merge keys (``<<: *defaults``) may still be overridden: only keys written out are compared.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):  # PyYAML may hand another node (`!!map` on a scalar): super reports it
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not None:
                    raise _DuplicateKey(key, key_node.start_mark.line + 1, first)
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def parse_config(data: Any, *, source: str = "(inline)", env: Mapping[str, str] | None = None,
                 allow_unset_env: bool = False) -> Config:
    """Validate an already-parsed mapping (the body of ``config.yaml``)."""
    env = os.environ if env is None else env
    return _parse(_Parser(source, env), data, allow_unset_env)


def numeric_keys(data: Any, env: Mapping[str, str] | None = None) -> dict[str, NumberKey]:
    """Every numeric key ``data`` leads the parser to (those of its list entries and named sections
    included), with its kind and range: the schema of numbers, which tests walk to check each of them."""
    p = _Parser("(schema)", os.environ if env is None else env)
    _parse(p, data, False)
    return dict(p.numbers)


def _parse(p: "_Parser", data: Any, allow_unset_env: bool) -> Config:
    source, env = p.source, p.env
    if not isinstance(data, dict):
        raise ConfigError(source, "(top level)", f"a mapping of {', '.join(TOP_LEVEL_KEYS)}, got {_kind(data)}")
    data = p.expand(data, "")
    if p.missing:
        if not allow_unset_env:
            raise missing_env_error(source, p.missing)
        data = _without_unset(data)
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise ConfigError(source, str(key), f"unknown top-level key; expected one of {', '.join(TOP_LEVEL_KEYS)}"
                                                f"{did_you_mean(str(key), TOP_LEVEL_KEYS)}")
    model = p.model(data.get("model"))
    streaming = p.streaming(data.get("streaming"))
    platforms = p.platforms(data.get("platforms"))
    api_server = p.api_server(data.get("api_server"))
    conversation = p.conversation(data.get("conversation"))
    store = p.store(data.get("store"))
    coordination = p.coordination(data.get("coordination"))
    media = p.media(data.get("media"))
    operator = parse_operator_sections(p, data)
    outbound = parse_outbound_sections(p, data)
    hooks = parse_hooks(p, data.get(HOOKS_KEY))
    groups = parse_groups(p, data.get(GROUPS_KEY))
    voice = p.voice(data.get("voice"))
    mcp_servers = parse_mcp_servers(p, data.get(MCP_KEY))
    reactions = parse_reactions(p, data.get("reactions"))
    tools = parse_tools(p, data.get("tools"))
    web = p.web(data.get("web"))
    logs = parse_logging(p, data.get("logging"))
    telemetry = parse_telemetry(p, data.get("telemetry"))
    env_streaming = None
    raw_env = env.get(ENV_STREAMING)
    if raw_env is not None and raw_env.strip() != "":
        word = raw_env.strip().lower()
        if word in TRUE_WORDS:
            env_streaming = True
        elif word in FALSE_WORDS:
            env_streaming = False
        else:
            raise ConfigError(f"env {ENV_STREAMING}", ENV_STREAMING,
                              f"one of true/1/yes/on or false/0/no/off, got {raw_env!r}")
    config = Config(model=model, streaming=streaming, platforms=platforms, api_server=api_server,
                    conversation=conversation, store=store, coordination=coordination, media=media, operator=operator, voice=voice,
                    mcp_servers=mcp_servers, reactions=reactions, outbound=outbound, hooks=hooks, groups=groups, tools=tools, web=web, logging=logs, telemetry=telemetry, source=source,
                    env_streaming=env_streaming,
                    origins=dict(p.origins), missing_env=dict(p.missing))
    from .secrets import protect_config

    protect_config(config)  # from here on, no log line carries a key from this config
    return config


def did_you_mean(word: str, known: Any) -> str:
    """`` (did you mean telegram?)`` when a known name is close to ``word``, else nothing."""
    close = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def missing_env_error(source: str, missing: Mapping[str, tuple[str, ...]]) -> ConfigError:
    """One line for every unset environment variable at once (``missing``: key -> variable names)."""
    names = list(dict.fromkeys(n for ns in missing.values() for n in ns))
    used = ", ".join("${" + n + "}" for n in names)
    what = f"environment variable {names[0]}" if len(names) == 1 else f"environment variables {', '.join(names)}"
    return ConfigError(source, ", ".join(missing), f"{what} to be set (used as {used})")


class _Unset:
    """Stands, during ``allow_unset_env`` parsing, for a value whose environment variable is not set."""


_UNSET = _Unset()


def _without_unset(value: Any) -> Any:
    """``value`` with every unset value left out, as if it had not been written."""
    if isinstance(value, dict):
        return {k: _without_unset(v) for k, v in value.items() if v is not _UNSET}
    if isinstance(value, list):
        return [_without_unset(v) for v in value if v is not _UNSET]
    return value


@dataclass(frozen=True)
class NumberKey:
    """A numeric key of the schema: ``int``, ``number``, ``duration`` (seconds or ``30m``) or ``size`` (bytes)."""

    kind: str
    minimum: float | None
    maximum: float | None


class _Parser:
    """Validation helpers that know the file name, so every error is one line."""

    def __init__(self, source: str, env: Mapping[str, str]) -> None:
        self.source = source
        self.env = env
        self.origins: dict[str, str] = {}
        self.missing: dict[str, tuple[str, ...]] = {}  # key -> unset environment variables it uses
        #: every numeric key asked about (written or not) and its range: what tests walk to check them all
        self.numbers: dict[str, NumberKey] = {}

    def number(self, key: str, kind: str, minimum: float | None, maximum: float | None) -> None:
        """Note a numeric key a section parses by its own rules (a duration, a size) in :attr:`numbers`."""
        self.numbers[key] = NumberKey(kind, minimum, maximum)

    def fail(self, key: str, expected: str) -> ConfigError:
        return ConfigError(self.source, key, expected)

    def expand(self, value: Any, key: str) -> Any:
        """Replace ``${NAME}`` and ``${NAME:-default}``; note every unset variable (all are reported at once)."""
        if isinstance(value, str):
            unset: list[str] = []

            def sub(m: re.Match[str]) -> str:
                inside = _VAR.fullmatch(m.group(1))
                if inside is None:
                    raise self.fail(key or "(value)", f"${{NAME}} or ${{NAME:-default}} to use an environment "
                                                      f"variable, got {_show(m.group(0))}")
                name, default = inside.group(1), inside.group(2)
                found = self.env.get(name)
                if default is not None and not found:  # the shell's ":-": unset or empty
                    return default
                if found is None:
                    unset.append(name)
                    return ""
                return found
            expanded = _PLACEHOLDER.sub(sub, value)
            if unset:
                self.missing[key or "(value)"] = tuple(dict.fromkeys(unset))
                return _UNSET
            return expanded
        if isinstance(value, dict):
            return {k: self.expand(v, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v, f"{key}[{i}]") for i, v in enumerate(value)]
        return value

    def section(self, value: Any, key: str, allowed: tuple[str, ...] | None) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"a mapping, got {_kind(value)}")
        if allowed is not None:
            for k in value:
                if k not in allowed:
                    raise self.fail(f"{key}.{k}", f"unknown key; expected one of {', '.join(allowed)}"
                                                  f"{did_you_mean(str(k), allowed)}")
        return value

    def get(self, section: dict, prefix: str, name: str, kind: str, default: Any, **limits: Any) -> Any:
        key = f"{prefix}.{name}"
        if kind in ("int", "number"):  # known even when not written: the schema of numbers (NumberKey)
            self.numbers[key] = NumberKey(kind, limits.get("minimum"), limits.get("maximum"))
        if name not in section or section[name] is None:
            return default
        value = section[name]
        self.origins[key] = f"{self.source} ({key})"
        return self.check(value, key, kind, **limits)

    def check(self, value: Any, key: str, kind: str, *, minimum: float | None = None,
              maximum: float | None = None, choices: tuple[str, ...] | None = None) -> Any:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
                return value.strip().lower() in TRUE_WORDS
            raise self.fail(key, f"true or false, got {_show(value)}")
        if kind in ("int", "number"):
            self.numbers[key] = NumberKey(kind, minimum, maximum)
            try:
                return parse_number(value, whole=kind == "int", minimum=minimum, maximum=maximum)
            except NumberError as exc:
                raise self.fail(key, exc.expected) from None
        if kind == "str":
            if not isinstance(value, str):
                raise self.fail(key, f"a string, got {_kind(value)}")
            if choices and value not in choices:
                raise self.fail(key, f"one of {', '.join(choices)}, got {value!r}")
            return value
        if kind == "url":
            return self.url(value, key)
        if kind == "key":
            return self.api_key(value, key)
        if kind in ("strlist", "keylist"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list):
                raise self.fail(key, f"a list of non-empty strings, got {_kind(value)}")
            items = []
            for i, item in enumerate(value):
                if kind == "keylist":
                    item = self.api_key(item, f"{key}[{i}]")
                if not isinstance(item, str) or not item:
                    raise self.fail(f"{key}[{i}]", f"a non-empty string, got {_show(item) if item == '' else _kind(item)}")
                items.append(item)
            return tuple(items)
        raise AssertionError(kind)

    def url(self, value: Any, key: str) -> str:
        """An http(s) URL with a host; shown masked in the error, since it may carry credentials."""
        if not isinstance(value, str):
            raise self.fail(key, f"an http:// or https:// URL, got {_kind(value)}")
        url = value.strip()
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError:
            parts, host = None, None
        if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
            raise self.fail(key, f"an http:// or https:// URL such as https://api.openai.com/v1, "
                                 f"got {_show(mask_url(url))}")
        return url

    def api_key(self, value: Any, key: str) -> str | None:
        """A key with surrounding whitespace stripped (``$(cat key.txt)`` ends in a newline); none inside."""
        if not isinstance(value, str):
            raise self.fail(key, f"a string, got {_kind(value)}")
        stripped = value.strip()
        if any(ch.isspace() for ch in stripped):
            raise self.fail(key, "a key without spaces or line breaks inside (two values pasted together?)")
        return stripped or None

    def endpoint(self, value: Any, key: str, defaults: Endpoint | None = None) -> Endpoint:
        allowed = ("base_url", "api_key", "name", "api_mode", "vision")
        sec = self.section(value, key, allowed)
        d = defaults or Endpoint()
        return Endpoint(
            base_url=self.get(sec, key, "base_url", "url", d.base_url),
            api_key=self.get(sec, key, "api_key", "key", d.api_key),
            name=self.get(sec, key, "name", "str", d.name),
            api_mode=self.get(sec, key, "api_mode", "str", d.api_mode, choices=("chat_completions", "responses")),
            vision=self.get(sec, key, "vision", "bool", d.vision),
        )

    def fallback(self, item: Any, key: str, primary: Endpoint) -> Endpoint:
        """A real endpoint (base_url and name; the primary's key unless its own), or the word ``demo``.

        A mapping without base_url used to become the demo model silently: with the
        primary down, a canned demo greeting was the answer. Now it must say so.
        """
        if item == DEMO_WORD:
            return Endpoint()
        if isinstance(item, str):
            raise self.fail(key, f"an endpoint {{base_url: ..., name: ...}} or the word {DEMO_WORD} "
                                 f"(the built-in demo model), got {_show(mask_url(item))}")
        sec = self.section(item, key, ("base_url", "api_key", "name", "api_mode", "vision"))
        if sec.get("base_url") is None and f"{key}.base_url" not in self.missing:
            raise self.fail(f"{key}.base_url", "the URL of the endpoint to fall back to "
                                               f"(for the built-in demo model write `- {DEMO_WORD}` instead)")
        if sec.get("name") is None and sec.get("base_url") is not None:
            raise self.fail(f"{key}.name", "the model name to request from this fallback's base_url")
        return self.endpoint(sec, key, Endpoint(api_key=primary.api_key))

    def model(self, value: Any, key: str = "model") -> ModelConfig:
        """``model`` (or a ``models.NAME`` entry: the same keys), errors naming ``key``."""
        allowed = ("base_url", "api_key", "name", "api_mode", "fallback", "max_turns", "timeouts", "demo",
                   "system_prompt", "reasoning_starts_open", "transport",
                   "vision", "audio", "max_reply_chars")
        sec = self.section(value, key, allowed)
        endpoint = self.endpoint({k: sec[k] for k in ("base_url", "api_key", "name", "api_mode") if k in sec}, key)
        if endpoint.base_url and "name" not in sec:
            raise self.fail(f"{key}.name", "the model name to request from base_url (for example gpt-4o-mini)")
        fallback_raw = sec.get("fallback") or []
        if not isinstance(fallback_raw, list):
            raise self.fail(f"{key}.fallback", f"a list of endpoints (base_url, api_key, name), got {_kind(fallback_raw)}")
        fallback = tuple(self.fallback(item, f"{key}.fallback[{i}]", endpoint) for i, item in enumerate(fallback_raw))
        tsec = self.section(sec.get("timeouts"), f"{key}.timeouts", ("connect", "first_token", "stall"))
        td = Timeouts()
        timeouts = Timeouts(
            connect=self.get(tsec, f"{key}.timeouts", "connect", "number", td.connect, minimum=0.001,
                          maximum=DAY),
            first_token=self.get(tsec, f"{key}.timeouts", "first_token", "number", td.first_token,
                              minimum=0.001, maximum=DAY),
            stall=self.get(tsec, f"{key}.timeouts", "stall", "number", td.stall, minimum=0.001, maximum=DAY),
        )
        demo = self.section(sec.get("demo"), f"{key}.demo", ("tokens_per_second",))
        return ModelConfig(
            endpoint=endpoint,
            fallback=fallback,
            max_turns=self.get(sec, key, "max_turns", "int", 8, minimum=1, maximum=1000),
            timeouts=timeouts,
            demo_tokens_per_second=self.get(demo, f"{key}.demo", "tokens_per_second", "number", 30.0,
                                            minimum=0, maximum=1_000_000),
            system_prompt=self.get(sec, key, "system_prompt", "str", None),
            reasoning_starts_open=self.get(sec, key, "reasoning_starts_open", "bool", False),
            transport=self.get(sec, key, "transport", "str", "fast", choices=TRANSPORTS),
            vision=self.get(sec, key, "vision", "bool", True),
            audio=self.get(sec, key, "audio", "bool", False),
            max_reply_chars=self.get(sec, key, "max_reply_chars", "int", ModelConfig.max_reply_chars, minimum=100,
                                     maximum=100_000_000),
        )

    def conversation(self, value: Any) -> ConversationConfig:
        allowed = ("busy", "shutdown_grace", "typing_interval", "dedupe_window", "on_edit", "after_crash", "catch_up",
                   "catch_up_window")
        sec = self.section(value, "conversation", allowed)
        d = ConversationConfig()
        return ConversationConfig(
            busy=self.get(sec, "conversation", "busy", "str", d.busy, choices=("queue", "interrupt")),
            shutdown_grace=self.get(sec, "conversation", "shutdown_grace", "number", d.shutdown_grace, minimum=0,
                                    maximum=HOUR),
            typing_interval=self.get(sec, "conversation", "typing_interval", "number", d.typing_interval,
                                     minimum=0.5, maximum=HOUR),
            dedupe_window=self.get(sec, "conversation", "dedupe_window", "int", d.dedupe_window, minimum=1,
                                   maximum=10_000_000),
            on_edit=self.get(sec, "conversation", "on_edit", "str", d.on_edit, choices=("answer", "ignore")),
            after_crash=self.get(sec, "conversation", "after_crash", "str", d.after_crash, choices=("note", "retry")),
            catch_up=self.get(sec, "conversation", "catch_up", "str", d.catch_up, choices=("answer", "skip")),
            # at most a day: what the replicas' shared dedupe remembers by default (coordination.dedupe_ttl)
            catch_up_window=self.get(sec, "conversation", "catch_up_window", "number", d.catch_up_window,
                                     minimum=60, maximum=DAY),
        )

    def store(self, value: Any) -> StoreConfig:
        allowed = ("path", "url", "history_messages", "history_chars", "history_images")
        sec = self.section(value, "store", allowed)
        d = StoreConfig()
        path = self.get(sec, "store", "path", "str", d.path)
        url = self.get(sec, "store", "url", "str", d.url)
        if path and url:
            raise self.fail("store", "either path or url, not both")
        if url is not None and not _store_url_ok(url):
            raise self.fail("store.url", "a URL of the form sqlite:///path/to/state.db or "
                                         f"postgresql://user@host/dbname, got {_show(mask_url(url))}")
        return StoreConfig(
            path=path, url=url,
            history_messages=self.get(sec, "store", "history_messages", "int", d.history_messages, minimum=2,
                                      maximum=100_000),
            history_chars=self.get(sec, "store", "history_chars", "int", d.history_chars, minimum=100,
                                   maximum=100_000_000),
            history_images=self.get(sec, "store", "history_images", "int", d.history_images, minimum=0,
                                    maximum=1000),
        )

    def coordination(self, value: Any) -> CoordinationConfig:
        allowed = ("url", "lease_ttl", "dedupe_ttl")
        sec = self.section(value, "coordination", allowed)
        d = CoordinationConfig()
        url = self.get(sec, "coordination", "url", "str", d.url)
        if url is not None:
            url = url.strip()
            try:
                parts = urlsplit(url)
                ok = (parts.scheme in ("redis", "rediss") and bool(parts.hostname)) or \
                     (parts.scheme == "unix" and bool(parts.path))
            except ValueError:
                ok = False
            if not ok:
                raise self.fail("coordination.url", "a Redis URL such as redis://cache:6379/0 (or rediss://, "
                                                    f"unix:///path/redis.sock), got {_show(mask_url(url))}")
        return CoordinationConfig(
            url=url or None,
            lease_ttl=self.get(sec, "coordination", "lease_ttl", "number", d.lease_ttl, minimum=0.5, maximum=DAY),
            dedupe_ttl=self.get(sec, "coordination", "dedupe_ttl", "int", d.dedupe_ttl, minimum=1, maximum=365 * DAY),
        )

    def media(self, value: Any) -> MediaConfig:
        sec = self.section(value, "media", ("directory", "url_ttl", "inline_max_bytes", "keep_days", "public_url",
                                            "inbound_max_bytes", "image_max_side", "document_max_chars",
                                            "max_image_pixels", "max_concurrent_decodes", "pdf_timeout",
                                            "pdf_max_pages", "pdf_empty_pages", "pdf_memory_mb",
                                            "upload_queue_files", "upload_queue_bytes"))
        d = MediaConfig()
        return MediaConfig(
            inbound_max_bytes=self.inbound_max_bytes(sec.get("inbound_max_bytes")),
            image_max_side=self.get(sec, "media", "image_max_side", "int", d.image_max_side, minimum=16,
                                    maximum=16384),
            document_max_chars=self.get(sec, "media", "document_max_chars", "int", d.document_max_chars,
                                        minimum=100, maximum=100_000_000),
            max_image_pixels=self.get(sec, "media", "max_image_pixels", "int", d.max_image_pixels,
                                      minimum=1_000_000, maximum=500_000_000),
            max_concurrent_decodes=self.get(sec, "media", "max_concurrent_decodes", "int",
                                            d.max_concurrent_decodes, minimum=1, maximum=64),
            pdf_timeout=self.get(sec, "media", "pdf_timeout", "number", d.pdf_timeout, minimum=1, maximum=600),
            pdf_max_pages=self.get(sec, "media", "pdf_max_pages", "int", d.pdf_max_pages, minimum=1, maximum=100_000),
            pdf_empty_pages=self.get(sec, "media", "pdf_empty_pages", "int", d.pdf_empty_pages, minimum=1,
                                     maximum=100_000),
            pdf_memory_mb=self.get(sec, "media", "pdf_memory_mb", "int", d.pdf_memory_mb, minimum=256,
                                   maximum=65_536),
            upload_queue_files=self.get(sec, "media", "upload_queue_files", "int", d.upload_queue_files, minimum=1,
                                        maximum=10_000),
            upload_queue_bytes=self.upload_queue_bytes(sec.get("upload_queue_bytes"), d.upload_queue_bytes),
            directory=self.get(sec, "media", "directory", "str", d.directory),
            url_ttl=self.get(sec, "media", "url_ttl", "number", d.url_ttl, minimum=1, maximum=365 * DAY),
            inline_max_bytes=self.get(sec, "media", "inline_max_bytes", "int", d.inline_max_bytes, minimum=0,
                                      maximum=1024 ** 3),
            keep_days=self.get(sec, "media", "keep_days", "number", d.keep_days, minimum=0, maximum=36_500),
            public_url=self.get(sec, "media", "public_url", "url", d.public_url),
        )

    def inbound_max_bytes(self, value: Any) -> dict[str, int]:
        """``media.inbound_max_bytes``: one size for every kind, or a mapping kind -> size (others keep defaults).

        A size is a whole number of bytes or a string such as ``20 MB`` / ``512KiB``."""
        key = "media.inbound_max_bytes"
        limits = dict(INBOUND_MAX_BYTES)
        self.number(key, "size", 0, MAX_SIZE)
        if value is None:
            return limits
        self.origins[key] = f"{self.source} ({key})"
        if not isinstance(value, dict):
            size = self.size(value, key)
            return {kind: size for kind in limits}
        for kind, item in value.items():
            if kind not in limits:
                raise self.fail(f"{key}.{kind}", f"unknown kind; expected one of {', '.join(limits)}"
                                                 f"{did_you_mean(str(kind), tuple(limits))}")
            limits[kind] = self.size(item, f"{key}.{kind}")
        return limits

    def upload_queue_bytes(self, value: Any, default: int) -> int:
        """``media.upload_queue_bytes``: a size (``200 MB``), at least 1 MiB."""
        key = "media.upload_queue_bytes"
        self.number(key, "size", 1024 * 1024, MAX_SIZE)
        if value is None:
            return default
        self.origins[key] = f"{self.source} ({key})"
        size = self.size(value, key)
        if size < 1024 * 1024:
            raise self.fail(key, f"a size from 1048576 to {MAX_SIZE} bytes (1 MiB to {MAX_SIZE // 1024 ** 3} GiB), "
                                 f"got {_show(value)}")
        return size

    def size(self, value: Any, key: str) -> int:
        """A byte count up to :data:`MAX_SIZE`: a whole number, or a number with a unit (``20 MB``, ``512 KiB``)."""
        self.number(key, "size", 0, MAX_SIZE)
        expected = f"a size in bytes such as 20971520 or \"20 MB\", from 0 to {MAX_SIZE // 1024 ** 3} GiB"
        match = _SIZE.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            try:
                return int(parse_number(value, whole=True, minimum=0, maximum=MAX_SIZE))
            except NumberError:
                raise self.fail(key, f"{expected}, got {_show(value)}") from None
        size = int(float(match.group(1)) * _UNITS[(match.group(2) or "").lower() or None])
        if size > MAX_SIZE:
            raise self.fail(key, f"{expected}, got {_show(value)}")
        return size

    def voice(self, value: Any) -> VoiceConfig:
        sec = self.section(value, "voice", ("transcription", "speech", "show_transcript", "reply", "max_seconds"))
        d = VoiceConfig()
        reply = self.get(sec, "voice", "reply", "str", d.reply, choices=VOICE_REPLIES)
        speech = self.voice_endpoint(sec.get("speech"), "voice.speech", d.speech)
        if reply != "never" and not speech.configured and "voice.speech.base_url" not in self.missing:
            if not espeak_installed():
                raise self.fail("voice.speech.base_url", f"the URL of an OpenAI-compatible /v1/audio/speech endpoint "
                                                         f"(voice.reply is {reply} and the built-in engine, package "
                                                         f"espeakng-loader, is not installed)")
        return VoiceConfig(
            transcription=self.voice_endpoint(sec.get("transcription"), "voice.transcription", d.transcription),
            speech=speech,
            show_transcript=self.get(sec, "voice", "show_transcript", "bool", d.show_transcript),
            reply=reply,
            max_seconds=self.get(sec, "voice", "max_seconds", "number", d.max_seconds, minimum=1, maximum=DAY),
        )

    def voice_endpoint(self, value: Any, key: str, d: VoiceEndpoint) -> VoiceEndpoint:
        speech = key.endswith("speech")
        allowed = ("base_url", "api_key", "model", "timeout") + (("voice",) if speech else ("language",))
        sec = self.section(value, key, allowed)
        local = {"voice", "timeout"} if speech else set()  # the built-in speech engine reads voice
        if set(sec) - local and sec.get("base_url") is None and f"{key}.base_url" not in self.missing:
            raise self.fail(f"{key}.base_url", "an OpenAI-compatible endpoint such as https://api.openai.com/v1 "
                                               f"(the other {key} keys need it)")
        return VoiceEndpoint(
            base_url=self.get(sec, key, "base_url", "url", d.base_url),
            api_key=self.get(sec, key, "api_key", "key", d.api_key),
            model=self.get(sec, key, "model", "str", d.model) or d.model,
            voice=self.get(sec, key, "voice", "str", d.voice) if speech else d.voice,
            language=None if speech else self.get(sec, key, "language", "str", d.language),
            timeout=self.get(sec, key, "timeout", "number", d.timeout, minimum=0.1, maximum=HOUR),
        )

    def streaming(self, value: Any) -> StreamingConfig:
        sec = self.section(value, "streaming", None)
        d = StreamingConfig()
        overrides: dict[str, dict[str, Any]] = {}
        for name, item in sec.items():
            name = str(name)
            if name in ("enabled", "edit_interval", "min_tokens", "cursor"):
                continue
            key = f"streaming.{name}"
            if isinstance(item, dict):
                sub = self.section(item, key, ("enabled", "edit_interval", "min_tokens", "transport"))
                override: dict[str, Any] = {}
                if "enabled" in sub:
                    override["enabled"] = self.check(sub["enabled"], f"{key}.enabled", "bool")
                if "edit_interval" in sub:
                    override["edit_interval"] = self.check(sub["edit_interval"], f"{key}.edit_interval", "number",
                                                           minimum=0, maximum=HOUR)
                if "min_tokens" in sub:
                    override["min_tokens"] = self.check(sub["min_tokens"], f"{key}.min_tokens", "int", minimum=0,
                                                        maximum=1_000_000)
                if "transport" in sub:  # how the platform shows previews; the platform's plugin checks the word
                    override["transport"] = self.check(sub["transport"], f"{key}.transport", "str")
                overrides[name] = override
            else:
                try:
                    overrides[name] = {"enabled": self.check(item, key, "bool")}
                except ConfigError:
                    raise self.fail(key, "true/false or a mapping with enabled, edit_interval, min_tokens "
                                         f"(or one of enabled, edit_interval, min_tokens, cursor), got {_show(item)}") from None
        return StreamingConfig(
            enabled=self.get(sec, "streaming", "enabled", "bool", d.enabled),
            edit_interval=self.get(sec, "streaming", "edit_interval", "number", d.edit_interval, minimum=0, maximum=HOUR),
            min_tokens=self.get(sec, "streaming", "min_tokens", "int", d.min_tokens, minimum=0, maximum=1_000_000),
            cursor=self.get(sec, "streaming", "cursor", "str", d.cursor),
            overrides=overrides,
        )

    def platforms(self, value: Any) -> dict[str, dict[str, Any]]:
        sec = self.section(value, "platforms", None)
        out: dict[str, dict[str, Any]] = {}
        for name, item in sec.items():
            key = f"platforms.{name}"
            if item is None or isinstance(item, bool):
                item = {"enabled": bool(item) if item is not None else True}
            if not isinstance(item, dict):
                raise self.fail(key, f"a mapping (enabled plus the plugin's own keys), got {_kind(item)}")
            item = dict(item)
            if "enabled" in item:
                item["enabled"] = self.check(item["enabled"], f"{key}.enabled", "bool")
            if item.get("platform") is not None:  # an account: which plugin's platform serves it (accounts.py)
                plugin = item["platform"]
                if not isinstance(plugin, str) or not _ACCOUNT_NAME.fullmatch(plugin):
                    raise self.fail(f"{key}.platform", f"the name of an installed platform, e.g. telegram, "
                                                       f"got {_show(plugin)}")
                if not _ACCOUNT_NAME.fullmatch(str(name)):
                    raise self.fail(key, "an account name of letters, digits, _ and - (it is also the chats' "
                                         "prefix, e.g. support:123)")
            if item.get("rate_limits") is not None:
                item["rate_limits"] = parse_rate_limits(item["rate_limits"], source=self.source,
                                                        key=f"{key}.rate_limits")
            out[str(name)] = item
        return out

    def web(self, value: Any) -> WebConfig:
        sec = self.section(value, "web", ("enabled", "password", "session_hours", "trusted_proxies"))
        d = WebConfig()
        password = self.get(sec, "web", "password", "str", d.password)
        if password is not None and len(password.strip()) < 8:
            raise self.fail("web.password", "a password of at least 8 characters (or no web.password)")
        return WebConfig(
            enabled=self.get(sec, "web", "enabled", "bool", d.enabled),
            password=password,
            session_hours=self.get(sec, "web", "session_hours", "number", d.session_hours, minimum=0.01,
                                   maximum=24 * 365),
            trusted_proxies=self.networks(self.get(sec, "web", "trusted_proxies", "strlist", d.trusted_proxies),
                                          "web.trusted_proxies"),
        )

    def networks(self, items: tuple[str, ...], key: str) -> tuple[str, ...]:
        """Each item an IP address or a network in CIDR form, normalised (``10.0.0.0/8``, ``::1/128``)."""
        import ipaddress

        out = []
        for i, item in enumerate(items):
            try:
                out.append(str(ipaddress.ip_network(item.strip(), strict=False)))
            except ValueError:
                raise self.fail(f"{key}[{i}]", f"an IP address or a network (127.0.0.1, 10.0.0.0/8, fd00::/8), "
                                               f"got {_show(item)}") from None
        return tuple(out)

    def api_server(self, value: Any) -> ApiServerConfig:
        allowed = ("enabled", "host", "port", "api_keys", "allow_unauthenticated", "max_body_bytes",
                   "tool_progress_events", "model_name", "keepalive_interval", "cors_origins",
                   "expose_reasoning", "max_concurrent_streams", "approvals", "workers", "gateway_tools",
                   "extra_params")
        sec = self.section(value, "api_server", allowed)
        d = ApiServerConfig()
        return ApiServerConfig(
            enabled=self.get(sec, "api_server", "enabled", "bool", d.enabled),
            host=self.get(sec, "api_server", "host", "str", d.host),
            port=self.get(sec, "api_server", "port", "int", d.port, minimum=0, maximum=65535),
            api_keys=self.get(sec, "api_server", "api_keys", "keylist", d.api_keys),
            allow_unauthenticated=self.get(sec, "api_server", "allow_unauthenticated", "bool", d.allow_unauthenticated),
            max_body_bytes=self.get(sec, "api_server", "max_body_bytes", "int", d.max_body_bytes, minimum=1,
                                    maximum=1024 ** 3),
            tool_progress_events=self.get(sec, "api_server", "tool_progress_events", "bool", d.tool_progress_events),
            model_name=self.get(sec, "api_server", "model_name", "str", d.model_name),
            keepalive_interval=self.get(sec, "api_server", "keepalive_interval", "number", d.keepalive_interval,
                                        minimum=0, maximum=HOUR),
            cors_origins=self.get(sec, "api_server", "cors_origins", "strlist", d.cors_origins),
            expose_reasoning=self.get(sec, "api_server", "expose_reasoning", "bool", d.expose_reasoning),
            max_concurrent_streams=self.get(sec, "api_server", "max_concurrent_streams", "int",
                                            d.max_concurrent_streams, minimum=1, maximum=1_000_000),
            approvals=self.get(sec, "api_server", "approvals", "str", d.approvals, choices=API_APPROVALS),
            workers=self.workers(sec.get("workers"), "api_server.workers", d.workers),
            gateway_tools=self.get(sec, "api_server", "gateway_tools", "str", d.gateway_tools, choices=GATEWAY_TOOLS),
            extra_params=self.get(sec, "api_server", "extra_params", "strlist", d.extra_params),
        )

    def workers(self, value: Any, key: str, default: int) -> int:
        """``api_server.workers``: a whole number from 1 to :data:`MAX_WORKERS`, or ``auto`` (one per core)."""
        self.number(key, "int", 1, MAX_WORKERS)
        if value is None:
            return default
        self.origins[key] = f"{self.source} ({key})"
        if isinstance(value, str) and value.strip().lower() == "auto":
            return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
        try:
            return int(parse_number(value, whole=True, minimum=1, maximum=MAX_WORKERS))
        except NumberError as exc:
            raise self.fail(key, f"{exc.wanted}, or auto (one per core), {exc.got}") from None


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _store_url_ok(url: str) -> bool:
    """``sqlite:///path`` or a PostgreSQL URL with a host or a database (libpq reads the rest)."""
    if url.startswith("sqlite:///"):
        return True
    scheme, sep, rest = url.partition("://")
    return bool(sep) and scheme.lower() in ("postgresql", "postgres") and bool(rest.strip("/"))


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return _kind(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def espeak_installed() -> bool:
    """Whether the built-in speech engine's package (``espeakng-loader``, loaded by ``voice.espeak``) is
    installed: asked of importlib, so the config imports nothing of the voice package."""
    from importlib.util import find_spec

    return find_spec("espeakng_loader") is not None
