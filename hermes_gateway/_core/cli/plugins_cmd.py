"""``hermes-gateway plugins``: what is loaded, from where, with which limits."""

from __future__ import annotations

import argparse
from typing import Any

from .loading import load_for_display, print_errors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: $HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    # The listing is what a person needs to fix a mistyped platform name, so a config
    # mistake is printed (stderr, exit 2) without hiding it.
    config, plugins, errors = load_for_display(args.config)
    code = print_errors(errors)
    print("Plugins:")
    for name, plugin in sorted(plugins.pm.list_name_plugin(), key=lambda item: item[0] or ""):
        hooks = sorted(h.name for h in plugins.pm.get_hookcallers(plugin) or [])
        print(f"  {name}  ({plugins.origins.get(name or '', 'direct')})  hooks: {', '.join(hooks) or 'none'}")
    print("Platforms:")
    platforms = plugins.platforms()
    if not platforms:
        print("  (none)")
    for name, reg in sorted(platforms.items()):
        p = reg.platform
        budgets = ", ".join(f"{kind} {b.rate * 60:g}/min burst {b.burst}" for kind, b in p.budgets.items())
        if p.bot_budget is not None:
            budgets += f"; all chats {p.bot_budget.rate * 60:g}/min burst {p.bot_budget.burst}"
        enabled = "enabled" if config.platform_enabled(name) else "disabled"  # as `run` decides
        streaming = "streaming on" if config.streaming_for(name).enabled else "streaming off"
        account = f"account of {reg.account_of}, " if reg.account_of else ""
        print(f"  {name}  [{enabled}, {streaming}]  {account}from {reg.plugin_name} ({reg.origin})")
        print(f"    max {p.max_message_length} {p.length_unit} per message, edit interval >= {p.edit_interval:g}s, "
              f"budget {budgets}")
        print(f"    media: {describe_media(p.media)}")
        print(f"    settings (platforms.{name}): {describe_settings(p.settings)}")
    if plugins.problems:
        print("Problems:")
        for problem in plugins.problems:
            print(f"  {problem}")
    return code


def describe_settings(settings_type: Any) -> str:
    """``token (secret, required), base_url = 'https://…'`` — the keys a platform's section takes."""
    import dataclasses

    from ..platform import CORE_KEYS
    from ..platform_settings import secret_fields

    if settings_type is None:
        return f"only the core's keys ({', '.join(CORE_KEYS)})"
    secrets = set(secret_fields(settings_type))
    keys = []
    for f in dataclasses.fields(settings_type):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        notes = [n for n, on in (("secret", f.name in secrets), ("required", required)) if on]
        shown = f" = {f.default!r}" if not required and f.name not in secrets and f.default is not dataclasses.MISSING \
            else ""
        keys.append(f"{f.name}{shown}" + (f" ({', '.join(notes)})" if notes else ""))
    return ", ".join(keys) + f"; and the core's {', '.join(CORE_KEYS)}"


def size(limit: int) -> str:
    """A byte limit in the unit the platform states it in: ``10 MiB`` for 10 × 2²⁰, ``10 MB`` for 10⁷.

    A limit is declared as the platform documents it; shown in the other
    unit it reads "10.4858 MB" and the operator cannot tell it is Discord's
    round 10 MiB. So the largest unit that divides it exactly is used
    (binary or decimal), else the exact number of bytes.
    """
    for unit, factor in (("GiB", 1 << 30), ("GB", 10 ** 9), ("MiB", 1 << 20), ("MB", 10 ** 6), ("KiB", 1 << 10),
                         ("kB", 10 ** 3)):
        if limit % factor == 0:
            return f"{limit // factor} {unit}"
    return f"{limit:,} bytes"


def describe_media(limits: Any) -> str:
    """``image ≤10 MB, document ≤50 MB; captions 1024`` — or what happens without media support."""
    if limits is None:
        return "none (attachments are shown as a line of text: the link or the file name)"
    kinds = []
    for kind in ("image", "video", "audio", "document"):
        if kind in limits.kinds:
            limit = limits.limit_for(kind)
            kinds.append(f"{kind} ≤{size(limit)}" if limit else kind)
    urls = ", links fetched by the platform" if limits.urls else ""
    return f"{', '.join(kinds)}; captions {limits.caption_length}{urls}"
