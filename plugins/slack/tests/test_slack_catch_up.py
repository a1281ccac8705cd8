"""Messages sent while the gateway is down (issue 38, item 4): read from history at the next start and
answered once each, oldest first; never twice across restarts, Slack's own retries, or replicas.

Each "run" is a whole gateway in Socket Mode on the emulator with the same SQLite store (conversations,
received ids, the last message seen per channel). While no gateway runs, nobody receives events: the
emulator keeps people's messages in the channels' history only (Slack's retries have given up), unless
a test sets ``retry_missed`` (an outage shorter than Slack's ~5 minutes of retries).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing
from typing import Any


from hermes_gateway.testing import TestGateway
from hermes_slack import EVENTS_PATH, plugin
from hermes_slack.catch_up import SEEN_KEY
from slack_test_support import LIMITS, config, eventually

DM, GENERAL, OTHER = "D0ALICE", "C0GENERAL", "C0OTHER"
MENTION = "<@U0BOT>"


def run(api: Any, tmp_path: Any, mode: str = "socket", **conversation: Any) -> TestGateway:
    data = config(api, mode=mode)
    data["store"] = {"path": str(tmp_path / "state.db")}
    data["conversation"] = conversation
    return TestGateway(data, plugin, limits=LIMITS, shutdown_grace=0.5)


async def caught_up(gateway: TestGateway) -> None:
    """Until the catch-up after the connection has handed the core what it found (answers may still come)."""
    await gateway.client("slack").receiver.catch_up.wait()


async def answered(api: Any, channel: str, expected: list[str], thread: str | None = None) -> None:
    """Until the bot's replies in the channel (or thread) are ``expected``, each once. In any order: every
    top-level message has a thread of its own, and threads are answered side by side."""
    await eventually(lambda: Counter(api.screen(channel, thread)) == Counter(expected),
                     lambda: api.screen(channel, thread))


async def first_run(api: Any, tmp_path: Any) -> str:
    """The bot has a conversation in the DM and a thread in #general; returns that thread's ts."""
    async with run(api, tmp_path):
        await api.push_message(DM, "echo: hello", kind="im")
        thread = await api.push_message(GENERAL, f"{MENTION} echo: hi all", kind="channel")
        await answered(api, DM, ["hello"])
        await answered(api, GENERAL, ["hi all"])
    return thread


async def test_messages_sent_while_down_are_answered_once_each_and_never_again(api, tmp_path):
    thread = await first_run(api, tmp_path)
    # the gateway is down
    await api.push_message(DM, "echo: sent while down")
    also = await api.push_message(GENERAL, f"{MENTION} echo: also while down")
    await api.push_message(GENERAL, "echo: people chatting, not for the bot")
    await api.push_message(GENERAL, "echo: in the bot's thread, no mention needed", thread_ts=thread)
    await api.push_message(OTHER, f"{MENTION} echo: a channel the bot has no conversation in", kind="channel")
    api.history_page = 1  # one message a page: every page is read, by its cursor
    api.inject_rate_limit(1, method="conversations.history", channel=GENERAL)  # a 429, waited out by the core
    async with run(api, tmp_path) as gateway:
        await caught_up(gateway)
        await answered(api, DM, ["hello", "sent while down"])
        await answered(api, GENERAL, ["hi all", "in the bot's thread, no mention needed"], thread)
        await answered(api, GENERAL, ["also while down"], also)
    async with run(api, tmp_path) as gateway:  # restarted again: nothing is answered twice
        await caught_up(gateway)
        await api.push_message(DM, "echo: live")
        await answered(api, DM, ["hello", "sent while down", "live"])
        live = await api.push_message(GENERAL, f"{MENTION} echo: live here")
        await answered(api, GENERAL, ["live here"], live)
    assert api.screen(GENERAL, thread) == ["hi all", "in the bot's thread, no mention needed"]
    assert api.screen(GENERAL, also) == ["also while down"]
    assert len(api.screen(GENERAL)) == 4
    assert api.screen(OTHER) == []
    reads = api.calls_to("conversations.history", GENERAL)
    assert reads[0].status == 429 and all(r.status == 200 for r in reads[1:])
    assert any(r.params.get("cursor") for r in reads), "paged by cursor"
    assert not api.violations


async def test_with_catch_up_skip_nothing_sent_while_down_is_answered(api, tmp_path):
    await first_run(api, tmp_path)
    await api.push_message(DM, "echo: sent while down")
    async with run(api, tmp_path, catch_up="skip") as gateway:
        await caught_up(gateway)
        await api.push_message(DM, "echo: live")
        await answered(api, DM, ["hello", "live"])
    assert api.calls_to("conversations.history") == []


async def test_nothing_older_than_the_window_is_answered(api, tmp_path):
    """With no last message seen (a fresh store's), the read starts at the window's edge, not before."""
    async with run(api, tmp_path) as gateway:
        await api.push_message(DM, "echo: hello", kind="im")
        await answered(api, DM, ["hello"])
        await gateway.client("slack").receiver.catch_up.stop()
        await gateway.client("slack").context.delete_value(SEEN_KEY)
    await api.push_message(DM, "echo: two hours ago", age=2 * 3600)
    await api.push_message(DM, "echo: just now")
    async with run(api, tmp_path, catch_up_window=3600) as gateway:
        await caught_up(gateway)
        await answered(api, DM, ["hello", "just now"])
        await api.push_message(DM, "echo: live")
        await answered(api, DM, ["hello", "just now", "live"])


async def test_when_socket_mode_comes_back_what_came_meanwhile_is_answered(api, tmp_path):
    async with run(api, tmp_path) as gateway:
        await api.push_message(DM, "echo: hello", kind="im")
        await answered(api, DM, ["hello"])
        await api.take_socket_mode_down()
        context = gateway.client("slack").context
        await eventually(lambda: context.connection == "disconnected" and not api.connected,
                         lambda: context.connection)
        await api.push_message(DM, "echo: sent during the outage")  # nobody receives it; Slack gives up
        api.bring_socket_mode_back()
        await answered(api, DM, ["hello", "sent during the outage"])


async def over_http(api: Any, tmp_path: Any) -> TestGateway:
    gateway = run(api, tmp_path, mode="http")
    await gateway.start()
    api.events_url = f"{gateway.url}{EVENTS_PATH}"
    return gateway


async def test_over_http_what_slack_gave_up_retrying_is_read_at_the_start(api, tmp_path):
    """The Events API retries for about five minutes; a longer outage is caught up the same way."""
    gateway = await over_http(api, tmp_path)
    try:
        await api.push_message(DM, "echo: hello", kind="im")
        await answered(api, DM, ["hello"])
    finally:
        await gateway.stop()
        api.events_url = None  # nobody listens: Slack's retries of what is sent now come to nothing
    await api.push_message(DM, "echo: sent while down")
    gateway = await over_http(api, tmp_path)
    try:
        await caught_up(gateway)
        await answered(api, DM, ["hello", "sent while down"])
    finally:
        await gateway.stop()



async def test_two_replicas_and_slacks_own_retries_answer_each_message_once_in_total(api, tmp_path, redis_server):
    """Both replicas read the history, and Slack retries the missed events too: one answer per message."""
    await first_run(api, tmp_path)
    await api.push_message(DM, "echo: sent while down")
    await api.push_message(GENERAL, f"{MENTION} echo: also while down")
    api.retry_missed = True
    shared = {"coordination": {"url": redis_server.url}}
    replicas = [replica(api, tmp_path, shared, "a"), replica(api, tmp_path, shared, "b")]
    for gateway in replicas:
        await gateway.start()
    try:
        for gateway in replicas:
            await caught_up(gateway)
        assert len(api.calls_to("conversations.history", DM)) >= 2, "each replica read the DM's history"
        assert len([d for d in api.deliveries if d.attempt == 1]) >= 3, "Slack's retries came too"
        await api.push_message(DM, "echo: live")
        await answered(api, DM, ["hello", "sent while down", "live"])
        live = await api.push_message(GENERAL, f"{MENTION} echo: live here")
        await answered(api, GENERAL, ["live here"], live)
        await answered(api, GENERAL, ["hi all", "also while down", "live here"])
    finally:
        for gateway in replicas:
            await gateway.stop()


def replica(api: Any, tmp_path: Any, shared: dict[str, Any], name: str) -> TestGateway:
    """A replica with its own copy of the first run's store: both know the conversations and the last
    message seen, and neither sees what the other stores since, so both read (and hand on) the same
    messages: only the shared dedupe keeps them from being answered twice."""
    copy = tmp_path / f"{name}.db"
    with closing(sqlite3.connect(tmp_path / "state.db")) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    data = config(api)
    data.update(shared, store={"path": str(copy)})
    return TestGateway(data, plugin, limits=LIMITS, shutdown_grace=0.5)
