"""``hermes-gateway doctor``: why does my bot not answer? One line per check, ✓ or ✗ with the fix.

Checked: the config parses (and names only installed plugins); each
enabled platform's credentials work (through its plugin's
``Platform.doctor``); the model's upstream answers and lists the
configured model; the clock agrees with the upstream's ``Date``; the store
opens, is writable and its schema current; the media directory is
writable; Redis answers when ``coordination.url`` is set; the API port is
free (or held by this gateway); every MCP server starts and lists its tools.

Each check is bounded (``--timeout``, 5 s) and the independent ones run
concurrently, so doctor answers in a few seconds even when everything is
down. Exit 0 only when every line is ✓. Secrets never appear: every line
passes through the secret registry's scrubbing, and URLs are shown masked.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..config import Config, load_config
from ..config_check import check_names
from ..errors import ConfigError
from ..plugins import Plugins, installed_plugins
from .doctor_checks import DEFAULT_TIMEOUT, Check, Line, bounded
from .doctor_checks.mcp import check_mcp
from .doctor_checks.platforms import PlatformCheck
from .doctor_checks.services import check_port, check_redis
from .doctor_checks.store import check_store
from .doctor_checks.upstream import check_upstream


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"how long one check may take (default {DEFAULT_TIMEOUT:g})")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        for error in getattr(exc, "all", (exc,)):
            _print(Line(False, "config", f"{error}"))
        return 1
    plugins = installed_plugins()
    problems = [str(e) for e in check_names(config, plugins)]
    found = f"{config.source} parses" if config.source != "(defaults)" else "no config file: the defaults apply"
    _print(Line(not problems, "config", found if not problems else problems[0]))
    for problem in problems[1:]:
        _print(Line(False, "config", problem))
    lines = asyncio.run(diagnose(config, plugins, max(0.1, args.timeout)))
    for line in lines:
        _print(line)
    return 0 if not problems and all(line.ok for line in lines) else 1


async def diagnose(config: Config, plugins: Plugins, timeout: float) -> list[Line]:
    """Every check at once, each bounded; their lines in a fixed order (platforms, model, store, services)."""
    checks: list[tuple[str, Check]] = [
        ("platforms", PlatformCheck(plugins)), ("model", check_upstream), ("store", check_store),
        ("coordination", check_redis), ("api_server", check_port), ("mcp_servers", check_mcp),
    ]
    found = await asyncio.gather(*(bounded(subject, check, config, timeout) for subject, check in checks))
    return [line for lines in found for line in lines]


def _print(line: Line) -> None:
    print(str(line))
    sys.stdout.flush()
