"""Faults on every platform (issue 26 item 4): the upstream dies, babbles or hangs; the platform answers 5xx;
the store fails while running. Each case ends with the person seeing the full reply once or one clear
short message — never a cursor — and the gateway answering the next message.

A real in-process gateway with the installed plugin of each platform, on that platform's emulator, and a
scripted OpenAI-compatible upstream (tests/agent/scripted_upstream.py).
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from fault_surfaces import SURFACES, settle
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.conversation import FAILURE_NOTICE
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import SQLiteStore
from scripted_upstream import ScriptedUpstream, chunk, completion, text_stream

FULL = "The whole answer arrives once, word by word, without a cursor left behind."
NEXT = "And the next message is answered."
WORDS = [w + " " for w in FULL.split(" ")[:-1]] + [FULL.split(" ")[-1]]


def paced(steps: list[tuple], pause: float = 0.08) -> list[tuple]:
    out: list[tuple] = []
    for step in steps:
        out += [step, ("sleep", pause)]
    return out


class FailingStore(SQLiteStore):
    """The real SQLite store, whose connection starts refusing writes (``failure``) once ``failing`` is set."""

    failing = False
    failure = "database or disk is full"

    def _call(self, fn: Any, args: tuple) -> Any:
        if self.failing and getattr(fn, "__name__", "") not in ("_history", "read"):
            return super()._call(self._refuse, ())
        return super()._call(fn, args)

    def _refuse(self, db: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError(self.failure)


UPSTREAM_CASES = {
    # the connection dies mid-stream; the retry (a non-streamed call) has the answer
    "upstream dies mid-stream": [paced(text_stream(*WORDS[:5], done=False)[:-1]) + [("drop",)],
                                 [("json", completion(FULL))]],
    # bytes that are not SSE JSON, then the connection ends; the retry has the answer
    "upstream sends garbage": [[("data", chunk("", role="assistant")), ("raw", b"data: {this is not json\n\n"),
                                ("raw", b"\x00\xff garbage\n\n")], [("json", completion(FULL))]],
    # nothing at all within model.timeouts.first_token, and nothing useful from the non-streamed retry either
    "upstream hangs": [[("sleep", 8)], [("sleep", 8)]],
}
STORE_CASES = {"store is full": "database or disk is full", "store is locked": "database is locked",
               "store is read-only": "attempt to write a readonly database"}
CASES = [*UPSTREAM_CASES, "platform answers 5xx mid-reply", *STORE_CASES]


def gateway_for(surface: Any, upstream: ScriptedUpstream, store: SQLiteStore) -> Gateway:
    config = parse_config({
        "model": {"base_url": upstream.url, "name": "m", "api_key": "sk-test",
                  "timeouts": {"connect": 2, "first_token": 1.5, "stall": 1.5}},
        "api_server": {"enabled": False, "host": "127.0.0.1", "port": 0},
        "streaming": {surface.name: {"enabled": True, "min_tokens": 1}},
        "platforms": {surface.name: surface.section()},
    }, env={})
    import importlib

    fresh = type(importlib.import_module(f"hermes_{surface.name}").plugin)()  # the installed plugin, not shared
    gateway = Gateway(config, make_plugins(load_entry_points=False, extra=[fresh]), shutdown_grace=1.0)
    gateway.store = store
    return gateway


def outcome(new: list[str]) -> str:
    """What the person saw of one reply: "full" (once), "told" (one clear short message), else what went wrong."""
    if any("▌" in text for text in new):
        return f"a cursor stayed: {new}"
    if new.count(FULL) == 1 and len(new) == 1:
        return "full"
    if new and new[-1].strip() and len(new[-1]) <= 300 and (FAILURE_NOTICE in new[-1] or "interrupted" in new[-1]):
        return "told"
    return f"neither the full reply once nor a clear message: {new}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("platform", sorted(SURFACES))
async def test_a_fault_ends_with_the_full_reply_once_or_a_clear_message_and_the_next_message_is_answered(
        platform, case, tmp_path):
    surface = SURFACES[platform]()
    await surface.open()
    store = FailingStore(tmp_path / "state.db")
    try:
        async with ScriptedUpstream() as upstream:
            if case in UPSTREAM_CASES:
                for script in UPSTREAM_CASES[case]:
                    upstream.add(*script)
            else:
                upstream.add(*paced(text_stream(*WORDS)))
            upstream.add(*text_stream(NEXT))
            gateway = gateway_for(surface, upstream, store)
            async with gateway:
                await surface.ready(gateway)
                if case in STORE_CASES:
                    store.failure, store.failing = STORE_CASES[case], True
                await surface.say(gateway, "tell me")
                if case == "platform answers 5xx mid-reply":
                    assert await settle(lambda: bool(surface.screen())), "no preview appeared"
                    surface.fail_next_5xx()
                await settle(lambda: outcome(surface.screen()) in ("full", "told"), 30)
                seen = outcome(surface.screen())
                assert seen in ("full", "told"), seen
                if case == "upstream hangs":
                    assert seen == "told" and surface.screen() == [FAILURE_NOTICE]
                else:
                    assert seen == "full", "the full reply was there to be had (the retry's, or the platform's next try)"
                before = len(surface.screen())
                await surface.say(gateway, "and now?")
                assert await settle(lambda: surface.screen()[before:] == [NEXT], 30), surface.screen()
        if case in STORE_CASES:
            return
        users = []  # (Slack answers in a thread per message: a conversation per thread)
        for summary in await store.list_conversations():
            if summary.platform == platform and summary.chat_id == surface.chat:
                users += [m["content"] for m in await store.conversation(summary.id) or [] if m["role"] == "user"]
        assert "and now?" in users
    finally:
        await store.close()
        await surface.close()
