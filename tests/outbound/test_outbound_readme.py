"""The guide's (docs/outbound.md) "Speaking first" example is a config that loads, with what the text says it has."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.outbound.home import resolve_chat

README = Path(__file__).resolve().parents[2] / "docs" / "outbound.md"


def test_the_readme_example_loads():
    section = README.read_text(encoding="utf-8").split("## Speaking first", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    config = parse_config(yaml.safe_load(block), source="README", env={"TELEGRAM_TOKEN": "123:abc"})
    morning, heartbeat = config.outbound.schedules
    assert (morning.cron, morning.timezone, morning.conversation, morning.catch_up) == \
        ("0 8 * * 1-5", "Europe/Berlin", "chat", "once")
    assert heartbeat.every == 3600 and heartbeat.text == "Still here."
    assert resolve_chat(config, "telegram", morning.chat) == "-1001234567890"
    reminders = config.outbound.reminders
    assert reminders.enabled and reminders.max_per_chat == 10 and reminders.min_every == 60
