"""``hermes-gateway chat``: talk to the agent in this terminal (the default command).

Two modes, chosen by how it is called:

- a terminal on stdin and no ``-m``: the interactive chat (``interactive.py``),
  which continues its last conversation from the conversation store;
- ``-m MESSAGE``, or a message piped into stdin: one turn, the reply on
  stdout as plain text (``oneshot.py``), for scripts and pipes. It neither
  reads nor writes the stored conversation, so a script's answer never
  depends on what was said before.

Whether replies stream follows DESIGN.md's precedence: ``--stream`` /
``--no-stream`` here (the terminal's equivalent of an API client's own
``stream`` field), then ``streaming.cli``, then ``streaming.enabled`` /
``HERMES_STREAMING_ENABLED``, then off.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from ..config import Config
from .loading import load_checked

PLATFORM = "cli"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config.yaml to use (default: $HERMES_CONFIG, "
                        "./config.yaml, ~/.hermes/config.yaml, else the built-in demo model)")
    parser.add_argument("-m", "--message", metavar="MESSAGE",
                        help="send one message, print the reply to stdout and exit (also: pipe a message in); "
                             "the reply is printed whole unless --stream or streaming.cli is on")
    stream = parser.add_mutually_exclusive_group()
    stream.add_argument("--stream", dest="stream", action="store_true", default=None,
                        help="show replies as they are written (overrides streaming.cli)")
    stream.add_argument("--no-stream", dest="stream", action="store_false",
                        help="show each reply whole when it is done (overrides streaming.cli)")
    parser.add_argument("--no-history", action="store_true",
                        help="do not read or write history: neither the prompt history (~/.hermes/chat_history) "
                             "nor the saved conversation (the chat starts fresh and is forgotten)")


def streaming_enabled(config: Config, flag: bool | None) -> bool:
    """The command-line flag wins; otherwise the config's decision for the ``cli`` platform."""
    if flag is not None:
        return flag
    return config.streaming_for(PLATFORM).enabled


def run(args: argparse.Namespace) -> int:
    config, _plugins = load_checked(args.config)  # a skipped plugin is already logged as a warning
    if not getattr(args, "verbose", 0):
        # The chat shows the agent's failures itself, as one line in place; the same
        # warning logged to stderr would print them twice and cut through the reply box.
        logging.getLogger("hermes_gateway._core.agent").setLevel(logging.ERROR)
    streaming = streaming_enabled(config, args.stream)
    message = args.message
    if message is None and not _stdin_is_terminal():
        message = sys.stdin.read().strip()
        if not message:
            print("hermes-gateway: no message: pass -m MESSAGE or pipe one into stdin", file=sys.stderr)
            return 2
    if message is not None:
        from .oneshot import run_oneshot

        return asyncio.run(run_oneshot(config, message, streaming=streaming))
    from ..store import open_store
    from .interactive import ChatSession, default_history_path

    session = ChatSession(config, streaming=streaming,
                          history_path=None if args.no_history else default_history_path(),
                          store=None if args.no_history else open_store(config))
    return asyncio.run(session.run())


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
