"""``hermes-gateway usage [--by user|chat|model] [--since DATE]``: the tokens (and cost) every turn used.

Reads the store the config names, never creating it. Costs come from
``pricing:``; ``~`` marks totals that include estimates (turns whose
upstream reported no usage).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import datetime
from pathlib import Path

from ..config import load_config
from ..operator.usage import table
from ..store import MEMORY, is_server_store, open_store, store_location


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", choices=("user", "chat", "model"), default="model", help="one row per (default model)")
    parser.add_argument("--since", metavar="DATE", help="only turns on or after DATE (YYYY-MM-DD, local time)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


def parse_since(text: str | None) -> float | None:
    """``2026-12-01`` → that day's local midnight (Unix time); None when it is not a date."""
    if text is None:
        return 0.0
    try:
        return time.mktime(datetime.strptime(text.strip(), "%Y-%m-%d").timetuple())
    except ValueError:
        return None


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    since = parse_since(args.since)
    if since is None:
        print(f"hermes-gateway: --since takes a date such as 2026-12-01, got {args.since!r}", file=sys.stderr)
        return 2
    location = store_location(config)
    if location == MEMORY or (not is_server_store(config) and not Path(location).exists()):
        print(f"no usage recorded yet ({location})")
        return 0
    return asyncio.run(_run(config, args.by, since))


async def _run(config, by: str, since: float) -> int:
    store = open_store(config)
    try:
        records = await store.usage(since)
    finally:
        await store.close()
    if not records:
        print("no usage recorded yet" + (" in that period" if since else ""))
        return 0
    print("\n".join(table(config, records, by)))
    return 0
