"""``hermes-gateway new-plugin NAME [--dir PATH]``: scaffold a platform plugin distribution.

``PATH`` is the plugin's own folder (``--dir ~/src/hermes-matrix``), made if missing and refused unless empty;
by default ``./NAME``. It installs with ``pip install -e PATH``, passes ``pytest`` there (the
conformance suite against its own emulator), shows in ``hermes-gateway
plugins``, and answers ``hermes-gateway ask --platform NAME`` through its
emulator (its README says how).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..scaffold import ScaffoldError, scaffold


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the platform's name, e.g. acmechat (a-z, 0-9, _)")
    parser.add_argument("--dir", default=None, metavar="PATH",
                        help="the plugin's folder, made if missing, refused unless empty (default: ./NAME)")


def run(args: argparse.Namespace) -> int:
    try:
        target = scaffold(args.name, Path(args.name if args.dir is None else args.dir).expanduser(), into=True)
    except (ScaffoldError, OSError) as exc:
        print(f"hermes-gateway: new-plugin: {exc}", file=sys.stderr)
        return 2
    print(f"created {target}/ (the {args.name} platform plugin)\n"
          f"fill:  every 'FILL IN' in it marks a fact about {args.name} (limits, how messages arrive)\n"
          f"next:  pip install -e {target}  &&  cd {target}  &&  pytest\n"
          f"then:  see {target}/README.md to run it against its emulator")
    return 0
