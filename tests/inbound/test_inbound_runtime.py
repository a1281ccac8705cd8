"""The inbound runtime, seen from the chat: what a person sees after writing to the bot."""

from __future__ import annotations

import asyncio

import pytest

from hermes_gateway._core.store import ConversationKey
from hermes_gateway.testing import run_virtual
from inbound_helpers import CURSOR, People, make_gateway, reference


def test_a_redelivered_update_is_answered_once():
    ref = reference()

    async def main():
        async with make_gateway(ref) as gateway:
            people = People(gateway)
            first = people.say("1", "echo: hello there", update_id="upd-7")
            again = people.say("1", "echo: hello there", update_id="upd-7")  # the webhook, retried
            assert (await first).delivered and await again is None
            late = people.say("1", "echo: hello there", update_id="upd-7")  # ... and again, much later
            assert await late is None
        assert ref.chat("1").screen == ["hello there"]
    run_virtual(main())


def test_receive_returns_before_the_model_runs():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=2) as gateway:
            reply = People(gateway).say("1", "echo: one two three four")
            assert not reply.done() and ref.chat("1").calls == []  # a webhook is answered now
            await reply
        assert ref.chat("1").screen == ["one two three four"]
    run_virtual(main())


def test_messages_arriving_during_a_reply_are_answered_together_after_it():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=10) as gateway:
            people = People(gateway)
            first = people.say("1", "echo: a long first answer with many words in it")
            await asyncio.sleep(0.5)  # the first reply is streaming
            follow = [people.say("1", f"echo: next {i}") for i in range(3)]
            report = await first
            assert not report.interrupted
            reports = await asyncio.gather(*follow)
            assert reports[0] is reports[1] is reports[2], "three messages, one follow-up turn"
        assert ref.chat("1").screen == ["a long first answer with many words in it",
                                        "next 0\n\necho: next 1\n\necho: next 2"]
    run_virtual(main())


def test_interrupt_policy_stops_the_reply_and_answers_the_new_message():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=5, conversation={"busy": "interrupt"}) as gateway:
            people = People(gateway)
            first = people.say("1", "echo: alpha beta gamma delta epsilon zeta eta theta")
            await asyncio.sleep(1.0)
            second = people.say("1", "echo: stop, answer this")
            assert (await first).interrupted
            assert (await second).delivered
        cut, answer = ref.chat("1").screen
        assert "alpha beta gamma delta epsilon zeta eta theta".startswith(cut) and cut != "" and CURSOR not in cut
        assert answer == "stop, answer this"
    run_virtual(main())


def test_stop_command_stops_the_running_reply_and_keeps_what_was_shown():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=5) as gateway:
            people = People(gateway)
            reply = people.say("1", "echo: one two three four five six seven eight nine ten")
            await asyncio.sleep(1.0)
            queued = people.say("1", "echo: this was queued")
            stopped = people.say("1", "/stop")
            assert (await reply).interrupted and await queued is None
            await stopped
            assert (await people.say("1", "/stop")).delivered
        cut, said_stopped, said_nothing = ref.chat("1").screen
        assert "one two three four five six seven eight nine ten".startswith(cut) and CURSOR not in cut
        assert (said_stopped, said_nothing) == ("⏹ Stopped.", "Nothing to stop.")
    run_virtual(main())


def test_help_lists_the_commands_and_an_unknown_command_is_a_message():
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=0) as gateway:
            people = People(gateway)
            await people.say("1", "/help")
            await people.say("1", "/tmp/x is a path")
        help_text, answer = ref.chat("1").screen
        assert help_text.splitlines()[:4] == ["Commands:", "/new — start a new conversation (forget this one)",
                                             "/stop — stop the reply being written", "/help — list the commands"]
        assert answer and not answer.startswith("Commands:")
    run_virtual(main())


def test_groups_need_a_mention_and_allow_lists_are_enforced():
    ref = reference()

    async def main():
        platforms = {"reference": {"enabled": True, "allowed_chats": [1, "-5"], "allowed_users": ["ada", 7]}}
        async with make_gateway(ref, tokens_per_second=0, platforms=platforms) as gateway:
            people = People(gateway)
            said = [
                people.say("-5", "echo: among ourselves", chat_kind="group", sender_id="ada"),
                people.say("-5", "echo: hey bot", chat_kind="group", sender_id="ada", mentioned=True),
                people.say("-5", "/help@other_bot", chat_kind="group", sender_id="7", bot_name="me_bot"),
                people.say("-5", "/help@me_bot", chat_kind="group", sender_id="7", bot_name="me_bot"),
                people.say("1", "echo: direct", sender_id="7"),
                people.say("1", "echo: a stranger", sender_id="mallory"),
                people.say("2", "echo: another chat", sender_id="ada"),
            ]
            answered = [report is not None for report in await asyncio.gather(*said)]
        assert answered == [False, True, False, True, True, False, False]
        group = ref.chat("-5").screen
        assert group[0] == "hey bot" and group[1].startswith("Commands:")
        assert ref.chat("1").screen == ["direct"] and ref.chat("2").calls == []
    run_virtual(main())


def test_require_mention_off_answers_everything_in_a_group():
    ref = reference()

    async def main():
        platforms = {"reference": {"enabled": True, "require_mention": False}}
        async with make_gateway(ref, tokens_per_second=0, platforms=platforms) as gateway:
            await People(gateway).say("-5", "echo: anyone", chat_kind="group")
        assert ref.chat("-5").screen == ["anyone"]
    run_virtual(main())


def test_shutdown_lets_replies_finish_within_the_grace_then_stops_them_cleanly():
    ref = reference()

    async def main():
        gateway = make_gateway(ref, tokens_per_second=4, grace=2.0)
        async with gateway:
            people = People(gateway)
            short = people.say("1", "echo: quick")
            long = people.say("2", "echo: " + " ".join(f"w{i}" for i in range(100)))
            await asyncio.sleep(0.5)
        assert (await short).delivered and not (await short).interrupted
        assert (await long).interrupted
        late = people.say("3", "echo: too late")
        assert await late is None
        assert ref.chat("1").screen == ["quick"]
        [cut] = ref.chat("2").screen
        assert CURSOR not in cut and " ".join(f"w{i}" for i in range(100)).startswith(cut)
        assert ref.chat("3").calls == []
    run_virtual(main())


def test_a_message_the_model_cannot_read_gets_its_notice_once_in_its_place():
    ref = reference()
    notice = "Sorry, I can only read text messages."

    async def main():
        async with make_gateway(ref, tokens_per_second=10) as gateway:
            people = People(gateway)
            first = people.say("1", "echo: a reply that takes a moment to write")
            photo = [people.say("1", "", update_id="photo-1", notice=notice) for _ in range(2)]  # Meta redelivers
            assert (await first).delivered
            assert (await photo[0]).delivered and await photo[1] is None
            stranger = people.say("1", "", sender_id="mallory", notice=notice)
            blank = people.say("1", "   ")
            assert (await stranger).delivered  # no allow-list here: anyone's photo gets the notice
            assert await blank is None, "a message with neither text nor notice gets nothing"
        assert ref.chat("1").screen == ["a reply that takes a moment to write", notice, notice]
    run_virtual(main())


def test_a_notice_follows_the_allow_list():
    ref = reference()

    async def main():
        platforms = {"reference": {"enabled": True, "allowed_users": ["ada"]}}
        async with make_gateway(ref, tokens_per_second=0, platforms=platforms) as gateway:
            people = People(gateway)
            assert await people.say("1", "", sender_id="mallory", notice="text only, please") is None
            assert (await people.say("1", "", sender_id="ada", notice="text only, please")).delivered
        assert ref.chat("1").screen == ["text only, please"]
    run_virtual(main())


def test_a_plugin_adds_a_command_but_cannot_replace_a_built_in():
    from hermes_gateway import Command, hookimpl
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.plugins import make_plugins

    async def pong(ctx):
        return f"pong {ctx.args}".strip()

    async def hijack(ctx):
        return "hijacked"

    class Commands:
        @hookimpl
        def register_commands(self, register):
            register(Command("ping", "check that the bot is alive", pong))
            register(Command("stop", "not the core's stop", hijack))

    ref = reference()

    async def main():
        config = parse_config({"platforms": {"reference": {"enabled": True}}, "api_server": {"enabled": False}},
                              env={})
        async with Gateway(config, make_plugins(builtins=(), load_entry_points=False, extra=[ref, Commands()])) as gw:
            people = People(gw)
            await people.say("1", "/ping twice")
            await people.say("1", "/stop")
            await people.say("1", "/help")
        pong_text, stop_text, help_text = ref.chat("1").screen
        assert (pong_text, stop_text) == ("pong twice", "Nothing to stop.")
        assert "/ping — check that the bot is alive" in help_text and "not the core's stop" not in help_text
    run_virtual(main())


def test_a_message_with_a_lone_surrogate_is_answered_not_sent_upstream_broken():
    """A platform's JSON may carry "\\ud800": the model gets U+FFFD there, and the person an answer."""
    ref = reference()

    async def main():
        async with make_gateway(ref, tokens_per_second=0) as gateway:
            report = await People(gateway).say("1", "echo: before \ud800 after")
        assert report.delivered and report.error is None
        assert ref.chat("1").screen == ["before \ufffd after"]
    run_virtual(main())


def test_a_platform_declaring_a_command_prefix_takes_commands_with_it_and_help_shows_it():
    """Matrix's clients take ``/new`` for themselves, so a Matrix plugin declares ``command_prefix="!"``."""
    import dataclasses

    ref = reference()
    ref.platform = dataclasses.replace(ref.platform, command_prefix="!")

    async def main():
        async with make_gateway(ref, tokens_per_second=0) as gateway:
            people = People(gateway)
            await people.say("1", "echo: remember me")
            await people.say("1", "!help")
            await people.say("1", "/new")  # not a command here: a message for the model
            await people.say("1", "!new")
            history = await gateway.store.history(ConversationKey("reference", "1"))
        screen = ref.chat("1").screen
        assert screen[1].splitlines()[:4] == ["Commands:", "!new — start a new conversation (forget this one)",
                                              "!stop — stop the reply being written", "!help — list the commands"]
        assert not screen[2].startswith("✨") and screen[3].startswith("✨ New conversation")
        assert history == []  # !new forgot the conversation ("/new" was part of it)
    run_virtual(main())


def test_a_command_prefix_is_a_few_signs_never_a_letter_or_space():
    from hermes_gateway import Platform

    assert Platform(name="matrixish", command_prefix="!").command_prefix == "!"
    assert Platform(name="plain").command_prefix == "/"
    for bad in ("", "x", "! ", "/@", "!!!!", "1"):
        with pytest.raises(ValueError, match="command_prefix must be 1 to 3 characters"):
            Platform(name="p", command_prefix=bad)
