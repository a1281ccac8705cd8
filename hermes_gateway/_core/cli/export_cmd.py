"""``hermes-gateway export --chat ID | --user PLATFORM:ID [--format jsonl|markdown]``: conversations out.

For a person who asks for their data (GDPR art. 15/20) or an operator who
moves a conversation elsewhere. ``--chat`` takes a conversation id (as
``hermes-gateway history`` lists them) or ``PLATFORM:CHAT`` (every
conversation of that chat, its threads included); ``--user`` takes the
person's chats by the same rule ``forget`` uses (:mod:`hermes_gateway._core.store.erasure`):
a shared chat (a group) is named on stderr, not exported, since other
people's words are in it (``--chat`` exports it on purpose).

``jsonl``: one line per stored message, exactly as stored (tool calls and
results included), with its conversation, position and the media files it
references (path, kind, whether the file is still there). ``markdown``: the
same for a person to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any, Iterator

from ..config import Config, load_config
from ..store import ConversationStore, ConversationSummary, open_store
from ..store.erasure import media_refs, own_chats
from .person import platform_id, say, store_problem

EVERY = 1_000_000_000  # list_conversations' limit when every conversation is wanted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--chat", metavar="ID", help="a conversation id (hermes-gateway history) or PLATFORM:CHAT")
    which.add_argument("--user", type=platform_id, metavar="PLATFORM:ID",
                       help="every conversation of this person's own chats (telegram:42)")
    parser.add_argument("--format", choices=("jsonl", "markdown"), default="jsonl", help="jsonl (default) or markdown")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    if args.chat is not None and not args.chat.isdigit():
        try:
            platform_id(args.chat)
        except argparse.ArgumentTypeError as exc:
            say(f"export --chat: {exc} or a conversation id")
            return 2
    config = load_config(args.config)
    problem = store_problem(config)
    if problem is not None:
        say(f"nothing to export: {problem}")
        return 1
    return asyncio.run(_export(config, args))


async def _export(config: Config, args: argparse.Namespace) -> int:
    store = open_store(config)
    try:
        chosen = await _chosen(store, args)
        if not chosen:
            say(f"nothing to export: no conversation of {args.chat or ':'.join(args.user)}")
            return 1
        out = sys.stdout
        for summary in chosen:
            messages = await store.conversation(summary.id) or []
            lines = jsonl(summary, messages) if args.format == "jsonl" else markdown(summary, messages)
            for line in lines:
                out.write(line + "\n")
        return 0
    finally:
        await store.close()


async def _chosen(store: ConversationStore, args: argparse.Namespace) -> list[ConversationSummary]:
    """The conversations asked for, oldest first."""
    if args.chat is not None and args.chat.isdigit():
        found = await store.summary(int(args.chat))
        return [] if found is None else [found]
    every = await store.list_conversations(EVERY)
    if args.chat is not None:
        platform, chat = platform_id(args.chat)
        chats = {chat}
    else:
        platform, user_id = args.user
        usage = await store.usage()
        pairing = [p.chat_id for p in await store.pairings(0.0) if (p.platform, p.user_id) == (platform, user_id)]
        mine, shared = own_chats(user_id, [u.chat_id for u in usage if (u.platform, u.user_id) == (platform, user_id)]
                                 + pairing, [u.chat_id for u in usage if u.platform == platform and u.user_id != user_id])
        for chat in shared:
            if any(c.platform == platform and c.chat_id == chat for c in every):
                say(f"not exported: chat {platform}:{chat} is shared with other people "
                    f"(export --chat {platform}:{chat} exports it)")
        chats = set(mine)
    return sorted((c for c in every if c.platform == platform and c.chat_id in chats), key=lambda c: (c.created, c.id))


def _refs(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**ref, "exists": os.path.isfile(ref["path"])} for ref in media_refs(message)]


def jsonl(summary: ConversationSummary, messages: list[dict[str, Any]]) -> Iterator[str]:
    """One JSON object per message: where it belongs, the message as stored, the media it references."""
    for seq, message in enumerate(messages):
        yield json.dumps({"conversation": summary.id, "platform": summary.platform, "chat_id": summary.chat_id,
                          "thread_id": summary.thread_id, "seq": seq, "message": message, "media": _refs(message)},
                         ensure_ascii=False)


def markdown(summary: ConversationSummary, messages: list[dict[str, Any]]) -> Iterator[str]:
    """The conversation for a person to read: one section per message, tool calls as code, media as paths."""
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(summary.created))
    thread = f", thread {summary.thread_id}" if summary.thread_id else ""
    yield f"# Conversation {summary.id}: {summary.platform} chat {summary.chat_id}{thread}, started {started}"
    yield ""
    for message in messages:
        role = str(message.get("role", "?"))
        name = f" `{message['name']}`" if message.get("name") else ""
        yield f"## {role}{name}"
        yield ""
        text = _text(message.get("content"))
        if text:
            yield text
            yield ""
        for call in message.get("tool_calls") or ():
            function = call.get("function", {}) if isinstance(call, dict) else {}
            yield f"```tool-call {function.get('name', '?')}"
            yield str(function.get("arguments", ""))
            yield "```"
            yield ""
        for ref in _refs(message):
            missing = "" if ref["exists"] else " (no longer stored)"
            yield f"- {ref['kind']}: `{ref['path']}`{missing}"
        if media_refs(message):
            yield ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text"))
    return ""
