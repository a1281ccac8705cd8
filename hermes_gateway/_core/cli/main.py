"""``hermes-gateway``: dispatch to subcommands, turn known errors into one line.

Each subcommand is a module with ``add_arguments(parser)`` and
``run(args) -> int``, imported only when used so ``--help`` stays fast and
one broken command cannot break the others.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import Sequence

from ... import __version__
from ..errors import ConfigError, StartError
from ..store.base import StoreError

#: name -> (module, one-line help). The default command (no arguments) is ``chat``.
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("hermes_gateway._core.cli.chat", "talk to the agent in this terminal (the default)"),
    "ask": ("hermes_gateway._core.cli.ask", "one turn: stream the model's reply into a chat through a platform plugin"),
    "send": ("hermes_gateway._core.cli.send_cmd", "send text and files into a chat (scripts, alerts; --chat home)"),
    "schedules": ("hermes_gateway._core.cli.schedules_cmd", "list the configured schedules with their next run"),
    "run": ("hermes_gateway._core.cli.run", "start the gateway: the API server and every enabled platform"),
    "plugins": ("hermes_gateway._core.cli.plugins_cmd", "list plugins and platforms, their origin and limits"),
    "config": ("hermes_gateway._core.cli.config_cmd", "show the effective configuration and where each value came from"),
    "tools": ("hermes_gateway._core.cli.tools_cmd", "list every tool (built-in, plugin, MCP server) and its state"),
    "history": ("hermes_gateway._core.cli.history_cmd", "list stored conversations, or show one (history ID)"),
    "pairing": ("hermes_gateway._core.cli.pairing_cmd", "pending pairing codes; approve CODE; revoke USER"),
    "usage": ("hermes_gateway._core.cli.usage_cmd", "tokens and cost per user, chat or model (--by, --since)"),
    "export": ("hermes_gateway._core.cli.export_cmd", "write a chat's or a person's conversations (jsonl, markdown)"),
    "forget": ("hermes_gateway._core.cli.forget_cmd", "erase a person: conversations, usage, pairing, reminders, media"),
    "doctor": ("hermes_gateway._core.cli.doctor", "check the config, credentials, model, store, ports: what to fix"),
    "service": ("hermes_gateway._core.cli.service_cmd", "install this gateway as a service (systemd, launchd); uninstall"),
    "new-plugin": ("hermes_gateway._core.cli.new_plugin", "scaffold a platform plugin: package, emulator, tests"),
    "demo-llm": ("hermes_gateway._core.cli.demo_llm", "serve the built-in demo model as an OpenAI-compatible endpoint"),
}
DEFAULT_COMMAND = "chat"
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a C tool reports when its reader went away


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (after the global ``-v`` options), or None (``--help``, ``--version``)."""
    for arg in argv:
        if arg in COMMANDS:
            return arg
        if arg not in ("-v", "--verbose", "-vv"):
            return None
    return None


def build_parser(only: str | None = None, *, every: bool = True) -> argparse.ArgumentParser:
    """The parser: every subcommand's arguments, or (``every=False``, as :func:`main` asks) only ``only``'s.

    A subcommand's module is imported for its arguments, so :func:`main` imports just the chosen one: ``run``
    need not import the demo server, the terminal chat or the service units, and ``hermes-gateway --help``
    lists the commands without importing any (issue 39: every test's and every replica's start pays for what
    it imports)."""
    parser = argparse.ArgumentParser(
        prog="hermes-gateway",
        description="A chat-bot gateway whose LLM replies stream into chats, a terminal and an OpenAI-compatible API.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (repeat for debug)")
    parser.add_argument("--version", action="version", version=f"hermes-gateway {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if not every and name != only:
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            p.set_defaults(_unavailable=f"{name} is unavailable: {exc}")
            continue
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "-v", "--verbose", "-vv",
                                                                "--version")):
        argv = [DEFAULT_COMMAND, *argv]
    elif argv[0] in ("-v", "--verbose", "-vv") and (len(argv) == 1 or argv[1] not in COMMANDS):
        argv = [argv[0], DEFAULT_COMMAND, *argv[1:]]
    parser = build_parser(chosen_command(argv), every=False)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if getattr(args, "_unavailable", None):
        print(f"hermes-gateway: {args._unavailable}", file=sys.stderr)
        return 2
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # here, so a reader that went away is seen below and not at exit
        return code
    except ConfigError as exc:
        for error in getattr(exc, "all", (exc,)):  # several independent mistakes: one line each
            print(f"hermes-gateway: config error: {error}", file=sys.stderr)
        return 2
    except (StoreError, StartError) as exc:  # a store, a Redis or a plugin that cannot start: one line
        print(f"hermes-gateway: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `hermes-gateway config | head -1`: the reader has all it wanted
        silence_stdout()
        return EXIT_BROKEN_PIPE


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not complain about the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
