"""``hermes-gateway config``: the effective configuration, and where each value came from.

It shows what it can even when something is wrong: unset environment
variables are marked ``<unset: NAME>`` in place, and each mistake (those,
unknown platform names) is one line on stderr with exit code 2, the same
line ``run`` would refuse to start with.
"""

from __future__ import annotations

import argparse
from typing import Any

import yaml

from ..config import ENV_STREAMING, Config, did_you_mean
from ..config_view import SECRET_KEYS, effective, mask  # noqa: F401  (the command's names, kept)
from ..config_check import STREAMING_KEYS, STREAMING_ONLY_NAMES, edit_interval
from .loading import load_for_display, print_errors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: $HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")
    parser.add_argument("--chat", metavar="PLATFORM:CHAT[:USER]",
                        help="only this chat's effective model, persona, prompt, tools, streaming and busy policy")
    parser.add_argument("--kind", choices=("private", "group"), help="with --chat: the chat's kind (for overrides "
                        "that match chat_kind)")


def _platform_errors(config: Config, plugins: Any) -> list[Any]:
    """Each enabled platform's section parsed by its settings type, as ``run`` would: one error per platform."""
    from ..errors import ConfigError
    from ..platform_settings import parse_settings

    from ..accounts import plugin_platform

    errors = []
    for name, registered in plugins.platforms().items():
        settings_type = registered.platform.settings
        if settings_type is None or not config.platform_enabled(name):
            continue
        if plugin_platform(name, config.platforms.get(name)) != registered.plugin_platform:
            continue  # the entry names another plugin (a refused account): that one line says all
        try:
            parse_settings(settings_type, config.platforms.get(name), platform=name, source=config.source)
        except ConfigError as exc:
            errors.append(exc)
    return errors


def run(args: argparse.Namespace) -> int:
    config, plugins, errors = load_for_display(args.config)
    errors = [*errors, *_platform_errors(config, plugins)]
    code = print_errors(errors)
    if getattr(args, "chat", None):
        return run_chat(args, config, plugins) or code
    print(f"# source: {config.source}")
    if config.missing_env:
        unset = ", ".join(f"{', '.join(names)} ({key})" for key, names in config.missing_env.items())
        print(f"# not set: {unset}; run, ask and chat refuse to start until set")
    if config.model.is_demo and "model.base_url" not in config.missing_env:
        print("# model: the built-in demo model (set model.base_url and model.name for a real endpoint)")
    if config.env_streaming is not None:
        in_file = f"{config.source} says {'true' if config.streaming.enabled else 'false'}" \
            if "streaming.enabled" in config.origins else "default false"
        print(f"# streaming.enabled: {'true' if config.env_streaming else 'false'} from env {ENV_STREAMING} "
              f"({in_file})")
    print(yaml.safe_dump(effective(config, plugins), sort_keys=False, allow_unicode=True).rstrip())
    platforms = {name: reg.platform for name, reg in plugins.platforms().items()}
    known = sorted(set(platforms) | set(STREAMING_ONLY_NAMES))
    print("\n# streaming decision per platform (an API client's own `stream` field wins over all of these)")
    if config.env_streaming is not None:
        print(f"# {ENV_STREAMING} is set: it replaces streaming.enabled")
    for name in sorted(set(known) | set(config.streaming.overrides)):
        if name not in known:
            print(f"{name}: not a known platform{did_you_mean(name, [*STREAMING_KEYS, *known])}")
            continue
        settings, origin = config.explain_streaming(name)
        interval = f"{settings.edit_interval:g}s"
        if name in platforms:
            floor = edit_interval(config, platforms[name])
            if floor.raised:
                interval = f"{floor.configured:g}s → {floor.effective:g}s, {name}'s floor"
        print(f"{name}: {'on' if settings.enabled else 'off'} (from {origin['enabled']}); "
              f"edit_interval {interval} (from {origin['edit_interval']}); "
              f"min_tokens {settings.min_tokens} (from {origin['min_tokens']})")
    return code


def run_chat(args: argparse.Namespace, config: Config, plugins: Any) -> int:
    """``config --chat PLATFORM:CHAT[:USER]``: one chat's effective settings (:mod:`..operator.explain`)."""
    import asyncio
    import sys

    from ..operator.explain import explain_chat, parse_chat
    from ..tools import collect_tools

    spec = parse_chat(args.chat)
    if spec is None:
        print(f"hermes-gateway: --chat takes PLATFORM:CHAT or PLATFORM:CHAT:USER, got {args.chat!r}", file=sys.stderr)
        return 2
    platform, chat, user = spec
    chosen = asyncio.run(_stored_choices(config, platform, chat))
    tools = [tool.name for tool in collect_tools(plugins, config)]
    print("\n".join(explain_chat(config, platform, chat, user, args.kind, chosen, tools)))
    return 0


async def _stored_choices(config: Config, platform: str, chat: str) -> dict[str, str]:
    """The chat's /model and /persona choices, if a kept store exists (never creating one)."""
    from pathlib import Path

    from ..store import MEMORY, ConversationKey, StoreError, is_server_store, open_store, store_location

    location = store_location(config)
    if location == MEMORY or (not is_server_store(config) and not Path(location).exists()):
        return {}
    store = open_store(config)
    try:
        return await store.chat_settings(ConversationKey(platform, chat))
    except StoreError:
        return {}
    finally:
        await store.close()
