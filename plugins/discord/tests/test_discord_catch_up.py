"""Messages sent while the gateway is down (issue 38, item 4): read from the channel's history at the next
start and answered once each, oldest first; never twice across restarts or replicas.

Each "run" is a whole gateway on the emulator with the same SQLite store (conversations, received ids,
the last message seen per channel), as a restart on one machine keeps them. While no gateway runs, the
emulator's channels keep what people write (its history), and no session is there to receive it.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from contextlib import closing
from typing import Any


from discord_test_support import eventually, gateway_config, plugin_for_tests, FAST_LIMITS
from hermes_gateway.testing import TestGateway
from hermes_discord.catch_up import SEEN_KEY


def run(api: Any, tmp_path: Any, **conversation: Any) -> TestGateway:
    config = gateway_config(api)
    config["store"] = {"path": str(tmp_path / "state.db")}
    config["conversation"] = conversation
    return TestGateway(config, plugin_for_tests(), limits=FAST_LIMITS, shutdown_grace=0.5)


async def caught_up(gateway: TestGateway) -> None:
    """Until the catch-up after READY has handed the core what it found (its answers may still come)."""
    await gateway.client("discord").catch_up.wait()


async def answered(api: Any, channel: str, expected: list[str]) -> None:
    """Until the bot's replies in the channel are ``expected``, each once (in any order: with two replicas
    a reply in flight on one may land after the next one's)."""
    await eventually(lambda: Counter(api.screen(channel)) == Counter(expected), lambda: api.screen(channel))


async def test_messages_sent_while_down_are_answered_once_each_and_never_again(loose_api, tmp_path):
    api = loose_api
    dm, general, other = api.dm(), api.general, api.text_channel("other")
    async with run(api, tmp_path):  # the bot has a conversation in the DM and in #general
        await api.push_message(dm, "echo: hello")
        await api.push_message(general, "echo: hi all", mention=True)
        await answered(api, dm, ["hello"])
        await answered(api, general, ["hi all"])
    # the gateway is down
    await api.push_message(dm, "echo: sent while down")
    await api.push_message(general, "echo: also while down", mention=True)
    await api.push_message(general, "echo: people chatting, not for the bot")
    await api.push_message(dm, "echo: another bot's message", author_id="3003", bot=True)
    await api.push_message(other, "echo: a channel the bot has no conversation in", mention=True)
    api.inject_rate_limit(general, 0.3, kind="history")  # the first read there: a 429, waited out by the core
    async with run(api, tmp_path) as gateway:
        await caught_up(gateway)
        await answered(api, dm, ["hello", "sent while down"])
        await answered(api, general, ["hi all", "also while down"])
    async with run(api, tmp_path) as gateway:  # restarted again: nothing is answered twice
        await caught_up(gateway)
        await api.push_message(dm, "echo: live")
        await api.push_message(general, "echo: live here", mention=True)
        await answered(api, dm, ["hello", "sent while down", "live"])
        await answered(api, general, ["hi all", "also while down", "live here"])
    assert api.screen(other) == []
    history = [c for c in api.channel(general).calls if c.method == "history"]
    assert history[0].outcome == "rate_limited" and history[1].outcome == "ok"
    assert not api.violations  # no read inside the 429's window, every page within Discord's limits


async def test_with_catch_up_skip_nothing_sent_while_down_is_answered(loose_api, tmp_path):
    api = loose_api
    dm = api.dm()
    async with run(api, tmp_path, catch_up="skip"):
        await api.push_message(dm, "echo: hello")
        await answered(api, dm, ["hello"])
    await api.push_message(dm, "echo: sent while down")
    async with run(api, tmp_path, catch_up="skip") as gateway:
        await caught_up(gateway)
        await api.push_message(dm, "echo: live")
        await answered(api, dm, ["hello", "live"])
    assert not [c for c in api.channel(dm).calls if c.method == "history"]


async def test_nothing_older_than_the_window_is_answered(loose_api, tmp_path):
    """With no last message seen (a store from before this version), the read starts at the window's edge,
    not before; a channel the server does not list is then taken for the DM it is."""
    api = loose_api
    general, dm = api.general, api.dm()
    async with run(api, tmp_path) as gateway:
        await api.push_message(general, "echo: hi all", mention=True)
        await api.push_message(dm, "echo: hello")
        await answered(api, general, ["hi all"])
        await answered(api, dm, ["hello"])
        await gateway.client("discord").catch_up.stop()
        await gateway.client("discord").context.delete_value(SEEN_KEY)
    await api.push_message(general, "echo: two hours ago", mention=True, age=2 * 3600)
    await api.push_message(general, "echo: just now", mention=True)
    await api.push_message(dm, "echo: in the DM, no mention needed")
    async with run(api, tmp_path, catch_up_window=3600) as gateway:
        await caught_up(gateway)
        await answered(api, general, ["hi all", "just now"])
        await answered(api, dm, ["hello", "in the DM, no mention needed"])
        await api.push_message(general, "echo: live", mention=True)
        await answered(api, general, ["hi all", "just now", "live"])


async def test_after_a_reconnect_discord_would_not_resume_what_came_meanwhile_is_answered(loose_api, tmp_path):
    """A new session (READY, not RESUMED) while running: the catch-up runs then too."""
    api = loose_api
    dm = api.dm()
    async with run(api, tmp_path) as gateway:
        await api.push_message(dm, "echo: hello")
        await answered(api, dm, ["hello"])
        await api.take_gateway_down()
        api.forget_sessions()
        await api.push_message(dm, "echo: sent during the outage")
        api.bring_gateway_back()
        await eventually(lambda: api.identifies == 2, lambda: (api.identifies, api.resumes))
        await answered(api, dm, ["hello", "sent during the outage"])
        assert gateway.client("discord").context.connection == "connected"



async def test_two_replicas_answer_what_was_sent_while_down_once_in_total(loose_api, tmp_path, redis_server):
    """Both replicas read the history and hand the same messages on; the shared dedupe lets one answer."""
    api = loose_api
    dm, general = api.dm(), api.general
    shared = {"coordination": {"url": redis_server.url}}
    async with run(api, tmp_path):
        await api.push_message(dm, "echo: hello")
        await api.push_message(general, "echo: hi all", mention=True)
        await answered(api, dm, ["hello"])
        await answered(api, general, ["hi all"])
    await api.push_message(dm, "echo: sent while down")
    await api.push_message(general, "echo: also while down", mention=True)
    replicas = [replica(api, tmp_path, shared, "a"), replica(api, tmp_path, shared, "b")]
    for gateway in replicas:
        await gateway.start()
    try:
        for gateway in replicas:
            await caught_up(gateway)
        reads = [c for c in api.channel(dm).calls if c.method == "history"]
        assert len(reads) >= 2, "each replica read the DM's history"
        await api.push_message(dm, "echo: live")
        await answered(api, dm, ["hello", "sent while down", "live"])
        await api.push_message(general, "echo: live here", mention=True)
        await answered(api, general, ["hi all", "also while down", "live here"])
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
    config = gateway_config(api)
    config.update(shared, store={"path": str(copy)})
    return TestGateway(config, plugin_for_tests(), limits=FAST_LIMITS, shutdown_grace=0.5)
