"""What every command does first: read the config, load the plugins, refuse unknown names.

One place, so ``run``, ``ask`` and ``chat`` refuse ``platforms.telgram`` the same
way (one line, exit 2) before any model call or any listener.
"""

from __future__ import annotations

import sys

from ..config import Config, load_config, missing_env_error
from ..config_check import check_names, floor_warnings, raise_for_names
from ..plugins import Plugins, installed_plugins


def load_checked(path: str | None) -> tuple[Config, Plugins]:
    """The config and the plugins; :class:`~hermes_gateway._core.errors.ConfigError` for any mistake in either."""
    config = load_config(path)
    from .json_logs import apply_logging

    apply_logging(config.logging)  # logging.format / logging.level, from the first line on
    plugins = installed_plugins().configured(config)  # accounts and rate_limits: the platforms as configured
    raise_for_names(config, plugins)
    return config, plugins


def warn(config: Config, plugins: Plugins, platforms: list[str]) -> None:
    """Plugin problems and raised edit intervals of ``platforms``, one ``warning:`` line each on stderr."""
    for problem in plugins.problems:
        print(f"hermes-gateway: warning: {problem}", file=sys.stderr)
    for line in floor_warnings(config, plugins, platforms):
        print(f"hermes-gateway: warning: {line}", file=sys.stderr)


def load_for_display(path: str | None) -> tuple[Config, Plugins, list[str]]:
    """For ``config`` and ``plugins``: show what can be shown, and every mistake as one line.

    Unset environment variables and unknown names do not hide the rest; they are
    returned as lines to print (on stderr) and make the command exit 2.
    """
    config = load_config(path, allow_unset_env=True)
    plugins = installed_plugins().configured(config)
    errors = []
    if config.missing_env:
        errors.append(str(missing_env_error(config.source, config.missing_env)))
    errors += [str(e) for e in check_names(config, plugins)]
    return config, plugins, errors


def print_errors(errors: list[str]) -> int:
    """Each error as ``hermes-gateway: config error: ...`` on stderr; the exit code (2 if any)."""
    for error in errors:
        print(f"hermes-gateway: config error: {error}", file=sys.stderr)
    return 2 if errors else 0
