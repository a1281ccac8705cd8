"""``hermes-gateway new-plugin NAME [--dir DIR]``: scaffold a platform plugin distribution.

It installs with ``pip install -e DIR/NAME``, passes ``pytest`` there (the
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
    parser.add_argument("--dir", default=".", help="where to create the folder NAME (default: here)")


def run(args: argparse.Namespace) -> int:
    try:
        target = scaffold(args.name, Path(args.dir))
    except (ScaffoldError, OSError) as exc:
        print(f"hermes-gateway: new-plugin: {exc}", file=sys.stderr)
        return 2
    print(f"created {target}/ (the {args.name} platform plugin)\n"
          f"next:  pip install -e {target}  &&  cd {target}  &&  pytest\n"
          f"then:  see {target}/README.md to run it against its emulator")
    return 0
