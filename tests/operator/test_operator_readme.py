"""The guide's (docs/chats.md) "One bot, many people" example is a config that loads, with what the text says it has."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hermes_gateway._core.config import parse_config

README = Path(__file__).resolve().parents[2] / "docs" / "chats.md"


def test_the_readme_example_loads():
    section = README.read_text(encoding="utf-8").split("## One bot, many people", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    config = parse_config(yaml.safe_load(block), source="README", env={"OPENAI_API_KEY": "sk-example"})
    op = config.operator
    assert set(op.models) == {"big", "local"} and op.personas["tutor"].model == "big"
    assert op.access.unknown_users == "pair" and op.access.is_admin("slack", "U024BE7LH")
    assert op.command_roles == {"persona": "admin"} and len(op.overrides) == 2
    assert op.usage.footer == "tokens" and op.usage.pricing["big"].output == 10
