"""The declared message length keeps every event under Synapse's 65,536 bytes, whatever the text holds;
approval buttons are reactions a person's click answers; the settings refuse what cannot work, in one line."""

from __future__ import annotations

import pytest

import hermes_matrix
from hermes_gateway import Choice, ChoiceOption, ConfigError, MessageRef, Stream, utf8_length
from hermes_gateway.testing import PlatformRunner
from matrix_test_support import Person, join, runner, until

LIMIT = hermes_matrix.PLATFORM.max_message_length
#: Text that grows most on the way: JSON escapes quotes and backslashes, HTML escapes <, > and & and quotes.
WORST = ['"' * LIMIT, "\\" * LIMIT, ("<&>" * LIMIT)[:LIMIT], ("é" * LIMIT)[:LIMIT // 2], ("😀" * LIMIT)[:LIMIT // 4]]


async def test_a_message_and_an_edit_of_the_declared_length_are_accepted_whatever_they_hold(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with runner(synapse.url, bot, start=False) as run:
        room = await person.create_room(bot.user_id)
        await join(synapse.url, bot, room)
        client = run.client
        stream = Stream(platform=hermes_matrix.PLATFORM, chat_id=room, chat_kind="group")
        for text in WORST:
            assert utf8_length(text) <= LIMIT
            ref = await client.on_delta(stream, None, text[: len(text) // 2])
            await client.on_stream_end(stream, ref, text)  # an m.replace edit: the text twice, and the HTML
        shown = await person.screen(room, bot.user_id)
    await person.close()
    assert shown == WORST


async def test_a_click_on_a_questions_reaction_answers_it(synapse):
    bot, person = synapse.register("bot"), Person(synapse.url, synapse.register("person"))
    async with runner(synapse.url, bot) as run:
        room = await person.create_room(bot.user_id)
        await join(synapse.url, bot, room)
        stream = Stream(platform=hermes_matrix.PLATFORM, chat_id=room, chat_kind="group")
        choice = Choice("k3f9a2", "Run the tool x?", (ChoiceOption("approve", "Approve", "primary"),
                                                      ChoiceOption("deny", "Deny", "danger")))
        ref = await run.client.offer_choice(stream, choice)
        assert isinstance(ref, MessageRef)
        assert person.reactions_now(room, bot.user_id) == {ref.message_id: ["✅", "❌"]}
        await person.react(room, ref.message_id, "❌")
        await until(lambda: _choices(run), lambda c: len(c) == 1)
        answer = run.choices[0]
        assert (answer.chat_id, answer.user_id, answer.choice_id, answer.option) == \
            (room, person.user_id, "k3f9a2", "deny")
        await run.client.close_choice(stream, ref, "Denied.")
        await person.react(room, ref.message_id, "✅")  # the question is closed: a late click answers nothing
        await person.send(room, "after")
        await until(lambda: _received(run), lambda r: [i.text for i in r] == ["after"])
        assert len(run.choices) == 1
        assert await person.screen(room, bot.user_id) == ["Denied."]
    await person.close()


async def _choices(run):
    return list(run.choices)


async def _received(run):
    return list(run.received)


@pytest.mark.parametrize("section, key", [
    ({"homeserver": "matrix.example.org", "user_id": "@b:example.org", "access_token": "t"}, "homeserver"),
    ({"homeserver": "https://m.example.org", "user_id": "bot", "access_token": "t"}, "user_id"),
    ({"homeserver": "https://m.example.org", "user_id": "@b:example.org"}, "access_token"),
    ({"homeserver": "https://m.example.org", "user_id": "@b:example.org", "access_token": "t", "password": "p"},
     "access_token"),
    ({"homeserver": "https://m.example.org", "user_id": "@b:example.org", "access_token": "t", "sync_timeout": -1},
     "sync_timeout"),
])
def test_a_bad_section_is_one_line_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        PlatformRunner(hermes_matrix.plugin, settings=section, start=False).build()
    message = str(caught.value)
    assert f"platforms.matrix.{key}" in message and "\n" not in message
    assert "secret-value" not in message
