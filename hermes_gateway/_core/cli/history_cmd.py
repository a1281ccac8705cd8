"""``hermes-gateway history``: the stored conversations, newest first, a page at a time; ``history ID`` shows one.

A page is ``--limit`` conversations (50); ``--page N`` shows the Nth. Only that page is read (one indexed
query, LIMIT/OFFSET), so 100,000 stored conversations list as fast as 100 (issue 39); when there are more,
one line on stderr names the command for the next page, leaving stdout to the table (``| head``, ``| grep``).

Reads the store the config names (``store.path`` / ``store.url``, default
``<data dir>/state.db``) and never creates it: on a machine with no
conversations yet it says so. (A PostgreSQL store is opened as the gateway
opens it: its schema is made if the database is new.) Safe while the gateway runs (WAL: readers do
not wait for writers). ``history | head -1`` ends quietly, like any Unix
tool whose reader went away.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ..config import Config, load_config
from ..store import MEMORY, ConversationSummary, is_server_store, open_store, store_location
from .moment import when

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a C tool reports when its reader went away


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", nargs="?", type=int, metavar="ID", help="show this conversation's turns")
    parser.add_argument("-n", "--limit", type=positive, default=50, metavar="N",
                        help="conversations per page (default 50)")
    parser.add_argument("-p", "--page", type=positive, default=1, metavar="P",
                        help="show page P of the list, newest first (default 1)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


#: The largest ``--page`` or ``--limit``: their product, the rows skipped, stays within a database integer
#: (a larger page was an OverflowError traceback from SQLite).
MAX_ARGUMENT = 2**31 - 1


def positive(text: str) -> int:
    """An argument that must be a whole number from 1 to :data:`MAX_ARGUMENT` (argparse names the option in
    its error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    if value > MAX_ARGUMENT:
        raise argparse.ArgumentTypeError(f"{value} is more than {MAX_ARGUMENT}")
    return value


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    location = store_location(config)
    if location == MEMORY:
        print("hermes-gateway: the store is in memory (store.path: \":memory:\"): nothing is kept between runs",
              file=sys.stderr)
        return 1
    if not is_server_store(config) and not Path(location).exists():
        if args.id is not None:
            print(f"hermes-gateway: no conversation {args.id}: nothing is stored yet ({location})", file=sys.stderr)
            return 1
        return _write([f"no conversations yet ({location})"])
    return asyncio.run(_run(config, args))


async def _run(config: Config, args: argparse.Namespace) -> int:
    store = open_store(config)
    try:
        if args.id is None:
            return await _page(store, args)
        summary = await store.summary(args.id)
        messages = await store.conversation(args.id)
        if messages is None or summary is None:
            print(f"hermes-gateway: no conversation {args.id} (hermes-gateway history lists them)", file=sys.stderr)
            return 1
        return _write(show(summary, messages, _width()))
    finally:
        await store.close()


async def _page(store: Any, args: argparse.Namespace) -> int:
    """One page of the listing; one more row is read to know whether a next page exists."""
    page, limit = getattr(args, "page", 1), args.limit
    found = await store.list_conversations(limit + 1, offset=(page - 1) * limit)
    if not found and page > 1:
        print(f"hermes-gateway: no page {page}: fewer than {(page - 1) * limit + 1} conversations are stored",
              file=sys.stderr)
        return 1
    code = _write(listing(found[:limit], _width()))
    if code == 0 and len(found) > limit:
        first = (page - 1) * limit + 1
        print(f"conversations {first}-{first + limit - 1}; more: hermes-gateway history --page {page + 1}"
              + (f" --limit {limit}" if limit != 50 else ""), file=sys.stderr)
    return code


# -- what is printed ------------------------------------------------------------------------------------------

def listing(conversations: list[ConversationSummary], width: int = 100) -> list[str]:
    """A table, newest first: id, last activity, platform, chat, thread, turns, the first message clipped."""
    if not conversations:
        return ["no conversations yet"]
    rows = [(str(c.id), time.strftime("%Y-%m-%d %H:%M", time.localtime(c.last_activity)), c.platform, c.chat_id,
             c.thread_id or "-", str(c.turns)) for c in conversations]
    header = ("ID", "LAST ACTIVITY", "PLATFORM", "CHAT", "THREAD", "TURNS")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {0, 5}  # numbers line up on the right

    def cells(row: tuple[str, ...]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths)))

    lines = [cells(header) + "  FIRST MESSAGE"]
    for row, c in zip(rows, conversations):
        start = cells(row) + "  "
        lines.append(start + clip(c.first_text, max(10, width - len(start))))
    return lines


def show(summary: ConversationSummary, messages: list[dict[str, Any]], width: int = 100) -> list[str]:
    """One conversation: a header, then each message; a tool call or result is one line."""
    where = f"{summary.platform} {summary.chat_id}" + (f" (thread {summary.thread_id})" if summary.thread_id else "")
    turns = f"{summary.turns} turn{'s' if summary.turns != 1 else ''}"
    lines = [f"conversation {summary.id} · {where} · {turns} · started {when(summary.created)}, "
             f"last activity {when(summary.last_activity)}" + ("" if summary.current else " · ended by /new")]
    for message in messages:
        role = message.get("role")
        content = _text(message.get("content"))
        if role == "tool":
            lines.append("  ← result: " + clip(content, width - 12))
            continue
        if content:
            label = {"user": "you", "assistant": "assistant"}.get(str(role), str(role))
            lines.append("")
            first, *rest = content.splitlines() or [""]
            lines.append(f"{label}: {first}")
            lines.extend(f"  {line}" if line else "" for line in rest)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            lines.append("  → " + clip(f"{function.get('name', '?')}({function.get('arguments', '')})", width - 4))
    return lines


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters, whitespace runs (newlines too) as one space."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:max(0, width - 1)] + "…"


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return json.dumps(content, ensure_ascii=False)


def _width() -> int:
    return shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100


def _write(lines: list[str]) -> int:
    """Print ``lines``; a reader that went away (``| head -1``) ends it quietly."""
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        try:  # point stdout at /dev/null so the interpreter's final flush does not complain
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    return 0
