"""What the sync loop hands the core: edits, mentions, files (not downloaded), and a hostile server's events.

The client runs as the gateway runs it (``PlatformRunner``: whoami, then
the sync loop) against Synapse through :class:`FaultProxy`; ``received``
is what it handed the core. A homeserver may send anything: the proxy
rewrites the bot's ``/sync`` answers to carry broken events, and each costs
one log line while the good ones around it still arrive.
"""

from __future__ import annotations

import json
import logging

from matrix_test_support import FaultProxy, Person, join, runner, until


async def _received(runner_):
    return list(runner_.received)


async def test_a_persons_edit_arrives_as_edit_of_the_original_and_a_file_is_not_downloaded(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    proxy = await FaultProxy(synapse.url).start()
    async with runner(proxy.url, bot) as run:
        room = await person.create_room(bot.user_id)
        await join(synapse.url, bot, room)
        first = await person.send(room, "hello")
        edit = await person.send(room, "* hello again", **{"m.new_content": {"msgtype": "m.text", "body": "hello again"},
                                                           "m.relates_to": {"rel_type": "m.replace",
                                                                            "event_id": first}})
        mxc = await person.upload(b"%PDF-1.4 tiny", "plan.pdf", "application/pdf")
        await person.send(room, "the plan", msgtype="m.file", url=mxc, filename="plan.pdf",
                          info={"mimetype": "application/pdf", "size": 13})
        await person.send(room, "Brandenburger Tor", msgtype="m.location", geo_uri="geo:52.5163,13.3777;u=10")
        await person.send(room, "from another bot", msgtype="m.notice")
        got = await until(lambda: _received(run), lambda r: len(r) >= 4)
        original, edited, document, place = got[:4]
        assert not any("/media/" in path for _, path in proxy.requests), "a file was downloaded before the core asked"
        assert b"".join([c async for c in document.attachments[0].fetch()]) == b"%PDF-1.4 tiny"
    await proxy.stop()
    await person.close()
    assert (original.text, original.update_id, original.edit_of, original.chat_kind) == ("hello", first, None, "group")
    assert (edited.text, edited.update_id, edited.edit_of, edited.message_id) == ("hello again", edit, first, first)
    assert document.text == "the plan" and document.attachments[0].filename == "plan.pdf"
    assert place.text == "[a place: Brandenburger Tor (52.516300, 13.377700)]"  # a shared location: one line
    assert len(got) == 4, "an m.notice (another bot) is never answered"


BROKEN = ["not an event", {"type": "m.room.message"}, {"type": "m.room.message", "sender": "@x:localhost",
                                                        "event_id": "$a", "content": ["a", "list"]},
          {"type": "m.room.message", "sender": "@x:localhost", "event_id": "$b", "content": {"msgtype": "m.text",
                                                                                          "body": {"no": 1}}},
          {"type": "m.room.message", "sender": "@x:localhost", "event_id": "$c",
           "content": {"msgtype": "m.image", "body": "x.png", "url": "https://evil.example/x.png"}},
          {"type": "m.room.message", "sender": "@x:localhost", "event_id": "$d",
           "content": {"msgtype": "m.text", "body": "* x", "m.relates_to": {"rel_type": "m.replace",
                                                                            "event_id": "$a"}}},
          {"type": "m.room.message", "sender": "@x:localhost", "event_id": "$e",
           "content": {"msgtype": "m.text", "body": "x" * 70_000}},
          {"type": "m.reaction", "sender": "@x:localhost", "event_id": "$f", "content": {"m.relates_to": "oops"}},
          {"type": "m.room.message", "sender": "@x:localhost", "event_id": "$g",
           "content": {"msgtype": "m.location", "body": "here", "geo_uri": "geo:north,500"}}]


async def test_malformed_events_from_the_server_are_skipped_in_one_line_each(synapse, caplog):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    proxy = await FaultProxy(synapse.url).start()
    tampered = []

    def tamper(request, status, body):  # the first sync answer with a timeline gets the broken events first
        if not request.path.endswith("/sync") or status != 200 or tampered or "since" not in request.query:
            return body
        data = json.loads(body)
        for room in data.get("rooms", {}).get("join", {}).values():
            if room.get("timeline", {}).get("events"):
                room["timeline"]["events"] = BROKEN + room["timeline"]["events"]
                tampered.append(True)
        return json.dumps(data).encode()

    proxy.rewrite = tamper
    caplog.set_level(logging.WARNING, "hermes_matrix")
    async with runner(proxy.url, bot) as run:
        room = await person.create_room(bot.user_id)
        await join(synapse.url, bot, room)
        await person.send(room, "still answered")
        got = await until(lambda: _received(run), lambda r: len(r) >= 1)
        assert run.context.counts.get("malformed") == len(BROKEN)
    await proxy.stop()
    await person.close()
    assert [i.text for i in got] == ["still answered"]
    skipped = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert len(skipped) == len(BROKEN) and all("\n" not in line for line in skipped), skipped
