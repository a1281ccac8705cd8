"""``platform:id`` arguments of ``export`` and ``forget``, and the store they open (shared by both)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import Config
from ..store import MEMORY, is_server_store, store_location


def platform_id(text: str) -> tuple[str, str]:
    """``telegram:42`` -> ("telegram", "42"); argparse's type, so a bad one is a usage error naming the form."""
    platform, sep, ident = text.partition(":")
    if not sep or not platform or not ident:
        raise argparse.ArgumentTypeError(f"expected PLATFORM:ID (telegram:42), got {text!r}")
    return platform, ident


def store_problem(config: Config) -> str | None:
    """Why there is nothing to read in the configured store (in memory, or no file yet), or None."""
    location = store_location(config)
    if location == MEMORY:
        return "the store is in memory (store.path: \":memory:\"): nothing is kept between runs"
    if not is_server_store(config) and not Path(location).exists():
        return f"nothing is stored yet ({location})"
    return None


def say(line: str) -> None:
    print(f"hermes-gateway: {line}", file=sys.stderr)
