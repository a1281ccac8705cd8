"""``hermes-gateway forget --user telegram:42``: erase one person from the store and the media directory.

For a request to be forgotten (GDPR art. 17 and its kin): the person's
conversations, usage records, pairing state and reminders go in one store
transaction (:meth:`~hermes_gateway._core.store.base.ConversationStore.forget_person`
says what counts as theirs), then the media files their messages referenced
are deleted, only where they lie inside the media directory. It prints what
it deleted, one line per kind, and names the shared chats (groups) whose
conversations it kept because other people's words are in them too.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from ..config import Config, load_config
from ..media_dir import MediaDirectory
from ..store import open_store
from .person import platform_id, say, store_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", required=True, type=platform_id, metavar="PLATFORM:ID",
                        help="the person, as platform and user id (telegram:42)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    platform, user_id = args.user
    problem = store_problem(config)
    if problem is not None:
        say(f"nothing to forget: {problem}")
        return 0 if "nothing is stored" in problem else 1
    return asyncio.run(_forget(config, platform, user_id))


async def _forget(config: Config, platform: str, user_id: str) -> int:
    store = open_store(config)
    try:
        forgotten = await store.forget_person(platform, user_id)
    finally:
        await store.close()
    directory = MediaDirectory(config.media.path())
    files = 0
    for path in forgotten.media:
        if directory.contains(path):
            try:
                os.unlink(path)
                files += 1
            except FileNotFoundError:
                pass  # pruned already (media.keep_days)
    print(f"forgot {platform}:{user_id}:")
    for what, count in forgotten.counts.items():
        print(f"  {count} {what}")
    print(f"  {files} media files")
    for chat in forgotten.shared_chats:
        print(f"  kept: the conversations of chat {platform}:{chat} (other people took part; "
              f"this person's usage and pairing records in it are gone)")
    return 0
