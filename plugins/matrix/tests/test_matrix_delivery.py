"""The delivery core's guarantees on a real Synapse: a long reply streamed by edits at Synapse's stock pace with
no 429, a real ``M_LIMIT_EXCEEDED`` waited out, and a restart that answers nothing twice and loses nothing.

The bots here keep Synapse's stock ``rc_message`` (0.2 events a second,
burst 10: the server's own limiter, not an injected one) and the plugin's
own declared budgets (no test limits), except where a test overrides them
as an operator would (``rate_limits``).
"""

from __future__ import annotations

import json

import hermes_matrix
from hermes_gateway.testing import TestGateway
from matrix_test_support import FaultProxy, Person, gateway, gateway_config, until
from test_matrix_gateway import direct_chat

WORDS = " ".join(f"word{i}" for i in range(400))


async def test_a_400_word_reply_streams_by_edits_at_synapses_stock_pace_with_no_429(synapse):
    bot = synapse.register("bot", stock_limit=True)
    person = Person(synapse.url, synapse.register("person"))
    proxy = await FaultProxy(synapse.url).start()
    config = gateway_config(proxy.url, bot, tokens_per_second=400)
    async with TestGateway(config, hermes_matrix.plugin, shutdown_grace=1.0):  # the plugin's own limits
        room = await direct_chat(person, bot)
        await person.send(room, f"echo: {WORDS}")
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == [WORDS], timeout=120)
    events = [e for e in await person.events(room) if e["sender"] == bot.user_id and e["type"] == "m.room.message"]
    await proxy.stop()
    await person.close()
    assert proxy.rate_limited == 0
    original, edits = events[0], events[1:]
    assert len(edits) >= 2, "the reply was shown before it ended, by edits"
    for edit in edits:
        content = edit["content"]
        assert content["m.relates_to"] == {"rel_type": "m.replace", "event_id": original["event_id"]}
        new = content["m.new_content"]
        assert content["body"] == "* " + new["body"] and new["msgtype"] == "m.text"
        assert new["format"] == "org.matrix.custom.html" and new["formatted_body"].startswith("<p>")
    assert edits[-1]["content"]["m.new_content"]["body"] == WORDS, "the last edit is the whole reply, no cursor"


async def test_synapses_own_429_is_waited_out_and_the_reply_ends_whole(synapse):
    """An operator's rate_limits above what the homeserver allows: Synapse answers M_LIMIT_EXCEEDED with
    retry_after_ms; nothing goes into the chat before that wait is over, and the reply still ends whole."""
    bot = synapse.register("bot", stock_limit=True)
    person = Person(synapse.url, synapse.register("person"))
    proxy = await FaultProxy(synapse.url).start()
    sent: list[tuple[float, int, str]] = []
    import time

    def log(request, status, body):
        if request.method == "PUT" and "/send/" in request.path:
            wait = json.loads(body).get("retry_after_ms", 0) if status == 429 else 0
            sent.append((time.monotonic(), wait, request.path))
        return body

    proxy.rewrite = log
    too_fast = {"default": {"rate": 50, "burst": 50}, "private": {"rate": 50, "burst": 50}, "bot": {"rate": 50}}
    config = gateway_config(proxy.url, bot, tokens_per_second=150, rate_limits=too_fast)
    config["streaming"]["matrix"]["edit_interval"] = 0.1
    async with TestGateway(config, hermes_matrix.plugin, shutdown_grace=1.0, limits={"edit_interval": 0.1}):
        room = await direct_chat(person, bot)
        await person.send(room, f"echo: {WORDS}")
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == [WORDS], timeout=120)
    await proxy.stop()
    await person.close()
    limited = [(at, wait) for at, wait, _ in sent if wait]
    assert proxy.rate_limited >= 1 and limited, "Synapse never said M_LIMIT_EXCEEDED: the test proves nothing"
    for at, wait in limited:
        later = [t for t, _, _ in sent if t > at]
        assert not later or later[0] - at >= wait / 1000 - 0.05, "a call went into the chat before retry_after_ms"


async def test_a_restart_answers_nothing_twice_and_loses_nothing_sent_while_down(synapse, tmp_path):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    store = str(tmp_path / "store.db")
    async with gateway(synapse.url, bot, store=store, timeline_limit=2):
        room = await direct_chat(person, bot)
        await person.send(room, "echo: one")
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == ["one"])
    for word in ("two", "three", "four", "five"):  # more than one sync's timeline_limit: the rest is fetched
        await person.send(room, f"echo: {word}")
    async with gateway(synapse.url, bot, store=store, timeline_limit=2):
        await until(lambda: person.screen(room, bot.user_id), lambda s: "five" in words(s))
        await person.send(room, "echo: six")  # anything answered twice would stand before this answer
        shown = await until(lambda: person.screen(room, bot.user_id), lambda s: s[-1:] == ["six"])
    await person.close()
    # messages that waited while one was answered are answered together (the core's queue): each word once
    assert words(shown) == ["one", "two", "three", "four", "five", "six"], shown


def words(screen):
    return [w for text in screen for w in text.split() if w != "echo:"]
