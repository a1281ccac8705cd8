"""``hermes-gateway send``: text and files into a chat, the way a reply is delivered.

For scripts and alerts: ``echo "disk full" | hermes-gateway send --platform
telegram --chat home -``. The platform's client is built as ``ask`` builds
it (``Gateway(serve=False)``: set up, never started, nothing polls), and
the message goes through the delivery core (:mod:`..outbound.send`). Exit 0
when everything arrived; otherwise one line on stderr and exit 1 (2 for a
usage or config mistake).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..gateway import Gateway
from ..outbound.home import resolve_chat
from ..outbound.send import FileUnreadable, delivered_all, read_files, send_to_chat
from .loading import load_checked, warn
from .target import platform_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--platform", required=True, help="platform name (see `hermes-gateway plugins`)")
    parser.add_argument("--chat", required=True, help="chat id, or 'home' for platforms.<name>.home_chat")
    parser.add_argument("--thread", default=None, help="thread id, where the platform has threads")
    parser.add_argument("--file", action="append", default=[], metavar="PATH", help="attach a file (repeatable)")
    parser.add_argument("--config", help="config file (default: $HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")
    parser.add_argument("text", nargs="*", help="the text (Markdown); '-' reads it from stdin")


def run(args: argparse.Namespace) -> int:
    config, plugins = load_checked(args.config)
    problem = platform_problem(config, plugins, args.platform)
    if problem is not None:
        print(f"hermes-gateway: {problem}", file=sys.stderr)
        return 2
    chat = resolve_chat(config, args.platform, args.chat)
    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    if not text.strip() and not args.file:
        print("hermes-gateway: nothing to send: give TEXT, '-' for stdin, or --file PATH", file=sys.stderr)
        return 2
    try:
        media = read_files(args.file)
    except FileUnreadable as exc:
        print(f"hermes-gateway: {exc}", file=sys.stderr)
        return 2
    warn(config, plugins, [args.platform])

    async def deliver():
        async with Gateway(config, plugins, serve=False) as gateway:
            return await send_to_chat(gateway.delivery, args.platform, chat, text.strip(), thread_id=args.thread,
                                      media=media)

    report = asyncio.run(deliver())
    problem = delivered_all(report, media)
    if problem is not None:
        print(f"hermes-gateway: send to {args.platform} chat {chat} failed: {problem}", file=sys.stderr)
        return 1
    return 0
