"""The platform a one-shot command (``ask``, ``send``) talks into: known, and able to deliver.

Checked before anything runs (the model, a file read): a reply or message
that cannot be delivered is work wasted. The in-memory ``reference``
platform needs no configuration; every other one must be enabled in the
config file, since its client is built from there.
"""

from __future__ import annotations

from typing import Any

from ..config import Config, did_you_mean


def reference_platform(plugins: Any, name: str) -> Any:
    """The built-in reference platform registered as ``name``, or None (its screen can be printed)."""
    from ..builtin.reference_platform import ReferencePlatform

    plugin = plugins.platforms()[name].plugin
    owner = getattr(plugin, "platform", plugin)
    return owner if isinstance(owner, ReferencePlatform) else None


def platform_problem(config: Config, plugins: Any, name: str) -> str | None:
    """Why ``name`` cannot be sent into, in one line (the caller exits 2); None when it can."""
    platforms = plugins.platforms()
    if name not in platforms:
        known = ", ".join(sorted(platforms)) or "none"
        return f"unknown platform {name!r}{did_you_mean(name, platforms)} (known: {known})"
    if reference_platform(plugins, name) is None and not config.platform_enabled(name):
        state = "disabled" if name in config.platforms else "not configured"
        where = f"in {config.source}" if config.source != "(defaults)" else "(no config file found)"
        return (f"platform {name} is {state} {where}: set platforms.{name} (enabled: true and its keys) "
                "to send into it")
    return None
