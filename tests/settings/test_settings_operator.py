"""``models:``, ``personas:``, ``access:``, ``commands:``: parsed, and every mistake one line naming file and key."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway._core.config import parse_config


def parse(data):
    return parse_config(data, source="cfg.yaml", env={"BIG_KEY": "sk-big-secret"})


def test_a_full_example_parses():
    config = parse({
        "models": {"big": {"base_url": "https://api.example.com/v1", "name": "big-model", "api_key": "${BIG_KEY}",
                           "fallback": ["demo"], "vision": False}},
        "personas": {"pirate": "Talk like a pirate.", "poet": {"system_prompt": "Verse.", "model": "big-model",
                                                              "description": "rhymes"}},
        "access": {"admins": ["telegram:42", 7], "unknown_users": "pair", "pairing_ttl": 600,
                   "max_messages_per_minute": 10},
        "commands": {"persona": {"who": "admin"}},
    })
    op = config.operator
    assert op.models["big"].endpoint.api_key == "sk-big-secret" and op.models["big"].vision is False
    assert op.personas["pirate"].system_prompt == "Talk like a pirate." and op.personas["poet"].model == "big-model"
    assert op.access.admins == ("telegram:42", "7") and op.access.unknown_users == "pair"
    assert op.access.is_admin("telegram", "42") and op.access.is_admin("slack", "7")
    assert not op.access.is_admin("slack", "42") and not op.access.is_admin("telegram", None)
    assert op.command_roles == {"persona": "admin"}


def test_a_named_models_key_is_protected_like_the_default_ones():
    from hermes_gateway._core.secrets import scrub

    parse({"models": {"big": {"base_url": "https://api.example.com/v1", "name": "m", "api_key": "${BIG_KEY}"}}})
    assert "sk-big-secret" not in scrub("the key was sk-big-secret")


@pytest.mark.parametrize("data, expected", [
    ({"models": {"big": {"base_url": "https://x/v1"}}}, "cfg.yaml: models.big.name: the model name"),
    ({"models": {"big": {"base_url": "ftp://x", "name": "m"}}}, "cfg.yaml: models.big.base_url: an http://"),
    ({"models": {"default": {"name": "m"}}}, "cfg.yaml: models.default: a name of letters"),
    ({"models": {"big": "gpt"}}, "cfg.yaml: models.big: a mapping with the keys of model:"),
    ({"personas": {"p": {"model": "nope", "system_prompt": "x"}}}, "cfg.yaml: personas.p.model: a configured model"),
    ({"personas": {"p": {"description": "no prompt"}}}, "cfg.yaml: personas.p.system_prompt: the persona's"),
    ({"personas": {"p": {"system_prompt": "x", "colour": 1}}}, "cfg.yaml: personas.p.colour: unknown key"),
    ({"access": {"admins": [True]}}, "cfg.yaml: access.admins[0]: platform:user_id or user_id"),
    ({"access": {"unknown_users": "maybe"}}, "cfg.yaml: access.unknown_users: one of ignore, pair, allow"),
    ({"access": {"pairing_ttl": 0}}, "cfg.yaml: access.pairing_ttl: a number from 1 to 2,592,000"),
    ({"commands": {"model": {"who": "root"}}}, "cfg.yaml: commands.model.who: one of everyone, admin"),
    ({"commands": {"/model": {"who": "admin"}}}, "cfg.yaml: commands./model: a command name"),
    ({"overrides": {"chat": 1}}, "cfg.yaml: overrides: a list of"),
    ({"usage": {"footer": "words"}}, "cfg.yaml: usage.footer: one of off, tokens, cost"),
    ({"usage": {"footer": "cost"}}, "cfg.yaml: usage.footer: tokens or off, unless pricing: gives prices"),
    ({"pricing": {"m": {"input": 1}}}, "cfg.yaml: pricing.m: input and output"),
    ({"pricing": {"m": {"input": -1, "output": 1}}}, "cfg.yaml: pricing.m.input: a number from 0 to 1,000,000"),
    ({"overrides": [{"model": "demo"}]}, "cfg.yaml: overrides[0].match: a mapping with at least one of"),
    ({"overrides": [{"match": {"room": "x"}}]}, "cfg.yaml: overrides[0].match.room: unknown key"),
    ({"overrides": [{"match": {"chat_kind": "dm"}}]}, "cfg.yaml: overrides[0].match.chat_kind: private or group"),
    ({"overrides": [{"match": {"chat": 1}, "model": "gpt-9"}]}, "cfg.yaml: overrides[0].model: a configured model"),
    ({"overrides": [{"match": {"chat": 1}, "persona": "x"}]}, "cfg.yaml: overrides[0].persona: a persona under"),
    ({"overrides": [{"match": {"chat": 1}, "tools": {"allow": "x", "only": 1}}]},
     "cfg.yaml: overrides[0].tools.only: unknown key"),
    ({"overrides": [{"match": {"chat": 1}, "streaming": {"enabled": "perhaps"}}]},
     "cfg.yaml: overrides[0].streaming.enabled: true or false"),
    ({"overrides": [{"match": {"chat": 1}, "conversation": {"busy": "drop"}}]},
     "cfg.yaml: overrides[0].conversation.busy: one of queue, interrupt"),
])
def test_mistakes_are_one_line_naming_file_and_key(data, expected):
    with pytest.raises(ConfigError) as caught:
        parse(data)
    text = str(caught.value)
    assert text.startswith(expected) and "\n" not in text
