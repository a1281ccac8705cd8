"""The ``reactions:`` section and the check of its emoji against a platform's fixed list."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.settings.reactions import ReactionSettings, check_platform_emoji, platform_form


class FixedList:
    reaction_emoji = frozenset({"👀", "👍", "❤"})

    async def react(self, chat_id, message_id, emoji, thread_id=None):
        pass


def test_each_key_is_optional_and_null_means_none():
    config = parse_config({"reactions": {"received": "👀", "done": None}}, env={})
    assert config.reactions == ReactionSettings(received="👀") and config.reactions.enabled
    assert not parse_config({}, env={}).reactions.enabled


def test_an_emoji_outside_the_platforms_list_is_refused_in_one_line_and_vs16_is_forgiven():
    check_platform_emoji(ReactionSettings(received="👀", done="❤️"), "telegram", FixedList(), source="c.yaml")
    with pytest.raises(ConfigError) as caught:
        check_platform_emoji(ReactionSettings(failed="✅"), "telegram", FixedList(), source="c.yaml")
    line = str(caught.value)
    assert line.startswith("c.yaml: reactions.failed: an emoji telegram accepts") and "\n" not in line
    assert platform_form("❤️", FixedList.reaction_emoji) == "❤"


def test_a_platform_without_a_list_or_without_react_is_not_checked():
    class Free:
        async def react(self, chat_id, message_id, emoji, thread_id=None):
            pass

    class NoReact:
        reaction_emoji = frozenset({"👀"})

    check_platform_emoji(ReactionSettings(done="🦜"), "discord", Free(), source="c.yaml")
    check_platform_emoji(ReactionSettings(done="🦜"), "other", NoReact(), source="c.yaml")


def test_conversation_on_edit_takes_answer_or_ignore():
    assert parse_config({}, env={}).conversation.on_edit == "answer"
    assert parse_config({"conversation": {"on_edit": "ignore"}}, env={}).conversation.on_edit == "ignore"
    with pytest.raises(ConfigError, match=r"conversation\.on_edit"):
        parse_config({"conversation": {"on_edit": "reply"}}, env={})
