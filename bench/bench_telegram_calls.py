"""CPU per Bot API call of the Telegram plugin's transport (issue 39; run by hand).

``python bench/bench_telegram_calls.py [--calls 2000] [--chats 200] [--repeats 3]``: the Telegram emulator
runs in a child process (its CPU is not counted); this process makes ``--calls`` calls through
``TelegramClient.bot`` (the plugin's own transport), ``--chats`` of them at a time (sendMessage into each
chat, then editMessageText of those messages), and prints the CPU (``time.process_time``, all threads)
per call. What it measures is the cost of one call on the gateway's side (python-telegram-bot's request
building and parsing, the HTTP client), which ``scale.py`` finds after the model's last token.

``--via``: how the edits are made. ``bot`` (default): PTB's ``Bot.edit_message_text`` (a ``Message`` built
from every answer); ``post``: the plugin's own text call (``hermes_telegram.client._post``, what a reply's
previews and final text use); ``raw``: a bare ``aiohttp`` POST of the same parameters as a JSON body on one
session, 16 in flight, the answer's JSON read (the floor a text call can reach with aiohttp).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parents[1]

EMULATOR = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import TOKEN
async def main():
    async with BotApiEmulator(TOKEN) as api:
        print(api.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
asyncio.run(main())
"""


async def run(args: argparse.Namespace, base_url: str) -> list[float]:
    sys.path.insert(0, str(ROOT / "plugins" / "telegram" / "tests"))
    from hermes_gateway import PlatformContext  # noqa: F401  (the public surface the plugin uses)
    from hermes_telegram.client import bot_request
    from telegram import Bot
    from telegram_test_support import TOKEN

    per_call: list[float] = []
    for _ in range(args.repeats):
        bot = Bot(TOKEN, base_url=base_url, request=bot_request())
        await bot.initialize()
        chats = [20_000 + i for i in range(args.chats)]
        messages = await asyncio.gather(*(bot.send_message(chat, "hello") for chat in chats))
        cpu, made = time.process_time(), 0
        rounds = max(1, args.calls // args.chats)
        edit = _edit(args.via, bot)
        for r in range(rounds):
            await asyncio.gather(*(edit(m.chat_id, m.message_id, f"hello {r} " + "word " * args.words) for m in messages))
            made += len(messages)
        per_call.append((time.process_time() - cpu) / made * 1e3)
        await bot.shutdown()
        await _close_raw()
    return per_call


_raw: list[Any] = []  # the bare aiohttp session of ``--via raw``


async def _close_raw() -> None:
    while _raw:
        await _raw.pop().close()


def _edit(via: str, bot: Any) -> Callable[[int, int, str], Awaitable[Any]]:
    """One ``editMessageText`` with a bold entity, made the ``--via`` way."""
    entities = [{"type": "bold", "offset": 0, "length": 5}]
    if via == "bot":
        return lambda chat, message, text: bot.edit_message_text(text, chat_id=chat, message_id=message,
                                                                 entities=entities)
    if via == "post":
        from hermes_telegram.client import _post
        return lambda chat, message, text: _post(bot, "editMessageText", {
            "chat_id": str(chat), "message_id": message, "text": text, "entities": entities})
    import json

    import aiohttp
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=16))
    _raw.append(session)
    url = f"{bot.base_url}/editMessageText"
    headers = {"Content-Type": "application/json"}

    async def raw(chat: int, message: int, text: str) -> Any:
        body = json.dumps({"chat_id": str(chat), "message_id": message, "text": text,
                           "entities": entities}).encode()
        async with session.post(url, data=body, headers=headers) as response:
            return json.loads(await response.read())["result"]
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--words", type=int, default=50, help="words in each edit's text")
    parser.add_argument("--via", choices=("bot", "post", "raw"), default="bot")
    args = parser.parse_args()
    emulator = subprocess.Popen([sys.executable, "-c", EMULATOR, str(ROOT / "plugins" / "telegram" / "tests")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = emulator.stdout.readline().strip() if emulator.stdout else ""
        per_call = asyncio.run(run(args, base_url))
    finally:
        if emulator.stdin:
            emulator.stdin.close()
        emulator.wait(timeout=10)
    print(f"ms CPU per call: {', '.join(f'{v:.3f}' for v in per_call)} (median {sorted(per_call)[len(per_call) // 2]:.3f}); "
          f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
