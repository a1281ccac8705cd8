"""The effective configuration as a plain mapping, every secret masked: what ``config`` and the console show.

``hermes-gateway config`` prints it as YAML; the web console's dashboard
(issue 27) sends it as JSON. One function for both, so a secret masked in
one is masked in the other: values under secret-named keys, a platform's
``secret()`` settings fields (all non-core keys of a section no plugin
declares), credentials inside URLs, MCP servers' ``env`` and ``headers``.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from .config import Config
from .masking import mask_url

#: Keys whose values are secrets, by whole name (``first_token`` is a timeout, not a token).
SECRET_KEYS = frozenset({"api_key", "api_keys", "token", "bot_token", "access_token", "verify_token", "secret",
                         "password", "signing_secret", "app_secret", "client_secret"})
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def effective(config: Config, plugins: Any = None) -> dict:
    """The configuration as a plain mapping, secrets and credentials in URLs masked, unset values marked.

    A platform's section is masked by its settings type: every field marked
    secret (``hermes_gateway.secret``). A section no loaded plugin declares
    settings for shows only the core's keys; its other values are masked, since
    nothing says which of them are secrets.
    """
    model = config.model
    streaming_enabled = config.streaming.enabled if config.env_streaming is None else config.env_streaming
    data = {
        "model": {
            "base_url": model.endpoint.display_url, "name": model.endpoint.name, "api_key": model.endpoint.api_key,
            "api_mode": model.endpoint.api_mode, "max_turns": model.max_turns,
            "timeouts": asdict(model.timeouts), "demo": {"tokens_per_second": model.demo_tokens_per_second},
            "fallback": [{"base_url": f.display_url, "name": f.name, "api_key": f.api_key, "api_mode": f.api_mode}
                         if f.base_url or f"model.fallback[{i}].base_url" in config.missing_env else "demo"
                         for i, f in enumerate(model.fallback)],
            "system_prompt": model.system_prompt, "reasoning_starts_open": model.reasoning_starts_open,
            "vision": model.vision, "audio": model.audio,
        },
        "streaming": {"enabled": streaming_enabled, "edit_interval": config.streaming.edit_interval,
                      "min_tokens": config.streaming.min_tokens, "cursor": config.streaming.cursor,
                      **{k: dict(v) for k, v in config.streaming.overrides.items()}},
        "platforms": {k: _platform_section(k, v, plugins) for k, v in config.platforms.items()},
        "api_server": {**asdict(config.api_server), "api_keys": list(config.api_server.api_keys),
                       "cors_origins": list(config.api_server.cors_origins)},
        "conversation": asdict(config.conversation),
        "store": {**asdict(config.store), "url": mask_url(config.store.url) if config.store.url else None},
        "coordination": {**asdict(config.coordination), "url": config.coordination.display_url},
        "media": {**asdict(config.media), "directory": str(config.media.path())},
        **_operator_sections(config),
        **_outbound_sections(config),
        "voice": {**asdict(config.voice),
                  "transcription": {**asdict(config.voice.transcription),
                                    "base_url": config.voice.transcription.display_url},
                  "speech": {**asdict(config.voice.speech), "base_url": config.voice.speech.display_url}},
        "reactions": asdict(config.reactions),
        "web": {**asdict(config.web), "enabled": config.web_enabled},
        "logging": asdict(config.logging),
        "telemetry": {**asdict(config.telemetry), "otlp_endpoint": mask_url(config.telemetry.otlp_endpoint)
                      if config.telemetry.otlp_endpoint else None},
    }
    if config.mcp_servers:
        data["mcp_servers"] = _mcp_servers(config)
    if config.hooks:  # `secret` is masked below, as every secret-named key
        data["hooks"] = [{k: v for k, v in asdict(h).items() if v is not None} for h in config.hooks]
    data = mask(data)
    for key, names in config.missing_env.items():
        _put(data, key, f"<unset: {', '.join(names)}>")
    return data


def _outbound_sections(config: Config) -> dict:
    """``schedules``, ``tools`` and ``reminders`` (issue 24) as the config holds them."""
    reminders = config.outbound.reminders
    return {"schedules": [{k: v for k, v in asdict(s).items() if v is not None} for s in config.outbound.schedules],
            "tools": {"reminders": reminders.enabled},
            "reminders": {"max_per_chat": reminders.max_per_chat, "min_every": reminders.min_every,
                          "timezone": reminders.timezone}}


def _mcp_servers(config: Config) -> list[dict]:
    """``mcp_servers`` with every ``env`` and ``headers`` value masked (they carry tokens) and URL credentials."""
    out = []
    for server in config.mcp_servers:
        item: dict[str, Any] = {"name": server.name, "transport": server.transport}
        if server.transport == "stdio":
            item.update(command=server.command, args=list(server.args), env={k: "***" for k in server.env},
                        cwd=server.cwd)
        else:
            item.update(url=mask_url(server.url or ""), headers={k: "***" for k in server.headers})
        item.update(enabled=server.enabled, timeout=server.timeout,
                    tools={"allow": list(server.allow) if server.allow is not None else None,
                           "deny": list(server.deny)})
        out.append(item)
    return out


def _operator_sections(config: Config) -> dict:
    """``models``, ``personas``, ``access``, ``commands``, ``overrides``, ``usage``, ``pricing`` (issue 23), when set."""
    op = config.operator
    out: dict[str, Any] = {}
    if op.models:
        out["models"] = {name: {"base_url": m.endpoint.display_url, "name": m.endpoint.name,
                                "api_key": m.endpoint.api_key, "api_mode": m.endpoint.api_mode,
                                "fallback": [f.name if f.base_url else "demo" for f in m.fallback],
                                "system_prompt": m.system_prompt, "vision": m.vision}
                         for name, m in op.models.items()}
    if op.personas:
        out["personas"] = {name: {k: v for k, v in asdict(p).items() if k != "name" and v is not None}
                           for name, p in op.personas.items()}
    out["access"] = {**asdict(op.access), "admins": list(op.access.admins)}
    if op.command_roles:
        out["commands"] = {name: {"who": who} for name, who in op.command_roles.items()}
    if op.overrides:
        out["overrides"] = [{k: (list(v) if isinstance(v, tuple) else dict(v) if isinstance(v, dict) else v)
                             for k, v in asdict(o).items() if k != "index" and v not in (None, (), {})}
                            for o in op.overrides]
    out["usage"] = {"footer": op.usage.footer, "currency": op.usage.currency}
    if op.usage.pricing:
        out["pricing"] = {name: asdict(price) for name, price in op.usage.pricing.items()}
    return out


def _platform_section(name: str, section: Any, plugins: Any) -> dict:
    """``platforms.<name>`` with the settings type's secret fields masked (all but the core's keys if unknown)."""
    from .platform import CORE_KEYS
    from .platform_settings import secret_fields

    registered = plugins.platforms().get(name) if plugins is not None else None
    settings_type = registered.platform.settings if registered is not None else None
    if settings_type is None:  # no declared settings (or no plugin): none of its values is known to be safe
        hidden = {k for k in section if k not in CORE_KEYS}
    else:
        hidden = set(secret_fields(settings_type))
    return {k: ("***" if k in hidden and v not in (None, "") else v) for k, v in dict(section).items()}


def mask(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: mask(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, key) for v in value]
    if value and key.lower() in SECRET_KEYS:
        return "***"
    return value


def _put(data: dict, key: str, value: str) -> None:
    """Set ``model.fallback[0].api_key`` (a config key path) in ``data``, creating what is missing."""
    parts = [name if name else int(index) for name, index in _PATH_PART.findall(key)]
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list):
                return
            if last or part >= len(node):  # an unset list element was left out: put the marker back in its place
                node.insert(min(part, len(node)), value if last else {})
            node = node[min(part, len(node) - 1)]
        else:
            if not isinstance(node, dict):
                return
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, [] if isinstance(parts[i + 1], int) else {})
                if node is None:
                    return
