"""``logging:``: format text or json, a level; a mistake is one line naming the key and what it expects."""

from __future__ import annotations

import pytest

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError


def test_logging_defaults_to_text_and_the_command_lines_level():
    config = parse_config({}, source="c.yaml")
    assert (config.logging.format, config.logging.level) == ("text", None)


def test_logging_json_and_a_level():
    config = parse_config({"logging": {"format": "JSON", "level": "Info"}}, source="c.yaml")
    assert (config.logging.format, config.logging.level) == ("json", "info")


@pytest.mark.parametrize("section, key, expected", [
    ({"format": "yaml"}, "logging.format", "one of text, json, got 'yaml'"),
    ({"level": "loud"}, "logging.level", "one of debug, info, warning, error, critical, got 'loud'"),
    ({"colour": True}, "logging.colour", "unknown key; expected one of format, level"),
])
def test_a_bad_logging_value_is_one_line(section, key, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config({"logging": section}, source="c.yaml")
    text = str(caught.value)
    assert "\n" not in text and "c.yaml" in text and key in text and expected in text, text
