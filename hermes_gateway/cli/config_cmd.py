"""``hermes-gateway config``: the effective configuration, and where each value came from."""

from __future__ import annotations

import argparse
from dataclasses import asdict

import yaml

from ..config import ENV_STREAMING, Config, load_config
from ..plugins import make_plugins

#: Keys whose values are secrets, by whole name (``first_token`` is a timeout, not a token).
SECRET_KEYS = frozenset({"api_key", "api_keys", "token", "bot_token", "access_token", "verify_token", "secret",
                         "password", "signing_secret", "app_secret", "client_secret"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: $HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")


def effective(config: Config) -> dict:
    """The configuration as a plain mapping, secrets masked."""
    model = config.model
    data = {
        "model": {
            "base_url": model.endpoint.base_url, "name": model.endpoint.name, "api_key": model.endpoint.api_key,
            "api_mode": model.endpoint.api_mode, "max_turns": model.max_turns,
            "timeouts": asdict(model.timeouts), "demo": {"tokens_per_second": model.demo_tokens_per_second},
            "fallback": [{"base_url": f.base_url, "name": f.name, "api_key": f.api_key, "api_mode": f.api_mode}
                         for f in model.fallback],
        },
        "streaming": {"enabled": config.streaming.enabled, "edit_interval": config.streaming.edit_interval,
                      "min_tokens": config.streaming.min_tokens, "cursor": config.streaming.cursor,
                      **{k: dict(v) for k, v in config.streaming.overrides.items()}},
        "platforms": {k: dict(v) for k, v in config.platforms.items()},
        "api_server": {**asdict(config.api_server), "api_keys": list(config.api_server.api_keys)},
    }
    return mask(data)


def mask(value, key: str = ""):
    if isinstance(value, dict):
        return {k: mask(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, key) for v in value]
    if value and key.lower() in SECRET_KEYS:
        return "***" if not isinstance(value, list) else ["***"] * len(value)
    return value


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    print(f"# source: {config.source}")
    if config.model.is_demo:
        print("# model: the built-in demo model (set model.base_url and model.name for a real endpoint)")
    print(yaml.safe_dump(effective(config), sort_keys=False, allow_unicode=True).rstrip())
    names = sorted(set(make_plugins().platforms()) | {"cli", "api_server"} | set(config.streaming.overrides))
    print("\n# streaming decision per platform (an API client's own `stream` field wins over all of these)")
    if config.env_streaming is not None:
        print(f"# {ENV_STREAMING} is set: it replaces streaming.enabled")
    for name in names:
        settings, origin = config.explain_streaming(name)
        print(f"{name}: {'on' if settings.enabled else 'off'} (from {origin['enabled']}); "
              f"edit_interval {settings.edit_interval:g}s (from {origin['edit_interval']}); "
              f"min_tokens {settings.min_tokens} (from {origin['min_tokens']})")
    return 0
