"""The whole gateway on a real Synapse: direct chats and rooms, mentions, edits, files, reactions, encryption.

A person's account writes on Synapse; the gateway (the demo model) reads it
through its sync loop and answers; the test reads the room back through the
person's account, as their client would show it.
"""

from __future__ import annotations

from hermes_gateway.testing.samples import png
from matrix_test_support import Person, gateway, until


async def direct_chat(person, bot):
    """A direct chat the person opens with the bot (``is_direct`` invite), joined by the bot's sync."""
    room = await person.create_room(bot.user_id, direct=True)
    await until(lambda: person.events(room), lambda events: any(
        e["type"] == "m.room.member" and e["state_key"] == bot.user_id and e["content"]["membership"] == "join"
        for e in events))
    return room


async def test_a_direct_chat_is_answered_with_html_a_received_reaction_and_bang_commands(synapse, tmp_path):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with gateway(synapse.url, bot, reactions={"received": "👀"}):
        room = await direct_chat(person, bot)
        asked = await person.send(room, "echo: **bold** and `code`")
        shown = await until(lambda: person.shown(room, bot.user_id),
                            lambda s: [m["content"]["body"] for m in s] == ["**bold** and `code`"])
        content = shown[0]["content"]
        assert content["format"] == "org.matrix.custom.html"
        assert content["formatted_body"] == "<p><strong>bold</strong> and <code>code</code></p>"
        await until(lambda: _reactions(person, room, bot), lambda r: r.get(asked) == ["👀"])
        await person.send(room, "!help")  # chat commands start with "!" (Matrix clients keep "/" for their own)
        helped = await until(lambda: person.screen(room, bot.user_id), lambda s: len(s) == 2 and "!new" in s[1])
        assert "/new" not in helped[1], helped[1]
    await person.close()


async def _reactions(person, room, bot):
    return person.reactions_now(room, bot.user_id)


async def test_a_room_answers_only_when_the_bot_is_mentioned(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with gateway(synapse.url, bot):
        room = await person.create_room(bot.user_id)  # a room, not a direct chat
        await until(lambda: person.events(room), lambda events: any(
            e["type"] == "m.room.member" and e["state_key"] == bot.user_id for e in events
            if e["content"].get("membership") == "join"))
        await person.send(room, "echo: nobody asked you")
        await person.send(room, "echo: you were asked", **{"m.mentions": {"user_ids": [bot.user_id]}})
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == ["you were asked"])
        pill = f'<a href="https://matrix.to/#/{bot.user_id}">bot</a>'
        await person.send(room, "echo: by pill", format="org.matrix.custom.html", formatted_body=f"echo: by pill {pill}")
        # answered in order, one at a time: had the first been answered, it would stand before these
        await until(lambda: person.screen(room, bot.user_id), lambda s: s == ["you were asked", "by pill"])
    await person.close()


async def test_a_picture_the_person_sends_is_fetched_from_mxc_and_read(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with gateway(synapse.url, bot):
        room = await direct_chat(person, bot)
        image = png(3, 2, (255, 0, 0))
        mxc = await person.upload(image, "dot.png", "image/png")
        await person.send(room, "describe", msgtype="m.image", url=mxc, filename="dot.png",
                          info={"mimetype": "image/png", "size": len(image)})
        described = await until(lambda: person.screen(room, bot.user_id),  # the final text, not a preview
                                lambda s: len(s) == 1 and "PNG" in s[0].upper() and "▌" not in s[0])
        assert "3" in described[0] and "2" in described[0], described[0]
    await person.close()


async def test_an_encrypted_room_gets_one_line_and_is_left(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with gateway(synapse.url, bot):
        room = await person.create_room(bot.user_id, encrypted=True)
        events = await until(lambda: person.events(room), lambda events: any(
            e["type"] == "m.room.member" and e["state_key"] == bot.user_id and e["content"]["membership"] == "leave"
            for e in events))
    said = [e["content"]["body"] for e in events if e["type"] == "m.room.message" and e["sender"] == bot.user_id]
    assert len(said) == 1 and "encrypted" in said[0] and "not support" in said[0], said
    await person.close()
