"""The guide's (docs/chats.md) "Groups" example is a config that loads, with what the text says it has."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.groups.room import settings_for
from hermes_gateway import Incoming

README = Path(__file__).resolve().parents[2] / "docs" / "chats.md"


def test_the_readme_example_loads_and_its_override_applies_to_its_chat_only():
    section = README.read_text(encoding="utf-8").split("## Groups: the room's context and other bots", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    config = parse_config(yaml.safe_load(block), source="README", env={})
    assert (config.groups.context_messages, config.groups.context_chars, config.groups.bots,
            config.groups.max_bot_turns) == (20, 4000, "ignore", 3)
    there = settings_for(config, Incoming("telegram", "-1001234567890", "hi", chat_kind="supergroup"))
    elsewhere = settings_for(config, Incoming("telegram", "-100999", "hi", chat_kind="supergroup"))
    assert (there.context_messages, there.bots, there.context_chars) == (50, "mentions", 4000)
    assert (elsewhere.context_messages, elsewhere.bots) == (20, "ignore")
    assert parse_config({}).groups.keeps_context is False, "off by default"
