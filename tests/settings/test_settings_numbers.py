"""Every number of the config, walked: ``.nan``, ``.inf``, ``-.inf`` and a value out of its range are refused in
one line naming the file, the key and the range.

The keys are not listed here: :func:`numeric_keys` reports every numeric key the parser asks about (written or
not) with its kind and range, for a config that opens every section that holds numbers (a model under
``models``, an MCP server, a schedule, an override, prices). A key someone adds to any section is walked
without editing this file; a numeric field of the Config dataclasses the parser never asks about as a number
fails :func:`test_every_numeric_field_of_the_config_is_a_numeric_key`. Platform sections are walked the same
way, from each installed platform's settings dataclass.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

import hermes_gateway._core.config as config_module
from hermes_gateway._core.config import Config, NumberKey, load_config, numeric_keys
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.platform_settings import number_fields, parse_settings
from hermes_gateway._core.plugins import LOAD_PLUGINS_ENV, make_plugins
from hermes_gateway._core.settings.numbers import NumberError, parse_number, show_number

#: A config that opens every section holding numbers (each list and named section with one entry).
BASE: dict[str, Any] = {
    "models": {"m": {"base_url": "http://127.0.0.1:9/v1", "name": "n"}},
    "mcp_servers": [{"name": "a", "command": "x"}],
    "schedules": [{"name": "s", "every": "5m", "platform": "p", "chat": "1", "text": "hi"}],
    "streaming": {"p": {"edit_interval": 1, "min_tokens": 1}},
    "overrides": [{"match": {"platform": "p"}, "streaming": {"edit_interval": 1, "min_tokens": 1}}],
    "pricing": {"m": {"input": 1, "output": 1}},
    "hooks": [{"name": "h", "secret": "s" * 16, "verify": "bearer", "chat": "p:1", "prompt": "{body}"}],
    "voice": {"transcription": {"base_url": "http://127.0.0.1:9/v1"}, "speech": {"base_url": "http://127.0.0.1:9/v1"}},
}
#: Numeric dataclass fields whose YAML key has another last part, and fields that are no key at all.
ALIASES = {"demo_tokens_per_second": "tokens_per_second"}
NOT_KEYS = {"index"}  # an override's position in its list
KEYS = numeric_keys(BASE, env={})


def _set(data: Any, key: str, value: Any) -> None:
    """Write ``value`` at ``key`` (``a.b[0].c``; ``mcp_servers.NAME`` finds the list entry of that name)."""
    parts = [p for p in re.split(r"\.|(\[\d+\])", key) if p]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part.startswith("["):
            index = int(part[1:-1])
            if last:
                data[index] = value
            data = data[index]
        elif isinstance(data, list):
            data = next(item for item in data if item.get("name") == part)
        elif last:
            data[part] = value
        else:
            data = data.setdefault(part, {})


def _bad_values(number: NumberKey) -> list[Any]:
    assert number.minimum is not None and number.maximum is not None, "every number has a range"
    whole = number.kind in ("int", "size")
    step = 1 if whole else max(abs(number.maximum), 1)
    return [float("nan"), float("inf"), float("-inf"), number.minimum - (1 if whole else 0.5), number.maximum + step]


def test_the_walk_finds_the_keys_of_every_section():
    assert len(KEYS) >= 45
    for key in ("web.session_hours", "model.timeouts.first_token", "conversation.shutdown_grace",
                "model.demo.tokens_per_second", "tools.approval.timeout", "models.m.timeouts.stall",
                "mcp_servers.a.timeout", "schedules[0].every", "reminders.min_every", "media.inbound_max_bytes",
                "api_server.workers", "overrides[0].streaming.edit_interval", "pricing.m.input"):
        assert key in KEYS


@pytest.mark.parametrize("key", sorted(KEYS))
def test_every_numeric_key_refuses_nan_infinities_and_out_of_range(key: str, tmp_path: Path):
    number = KEYS[key]
    path = tmp_path / "config.yaml"
    for bad in _bad_values(number):
        data = copy.deepcopy(BASE)
        _set(data, key, bad)
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ConfigError) as caught:
            load_config(path, env={}, search=False)
        error = caught.value
        line = str(error)
        assert "\n" not in line
        assert (error.source, error.key) == (str(path), key), line
        assert line.startswith(f"{path}: {key}: "), line
        if number.kind in ("int", "number"):
            assert f"from {show_number(number.minimum)} to {show_number(number.maximum)}" in line, line
        else:  # a size or a duration says its range in its own units
            assert re.search(r"from \S+ to \S+|above \S+ and at most \S+", line), line


def test_every_numeric_key_accepts_its_bounds(tmp_path: Path):
    path = tmp_path / "config.yaml"
    for key, number in KEYS.items():
        for good in (number.minimum, number.maximum):
            if number.kind == "duration" and good == 0:
                continue  # a duration is above 0
            data = copy.deepcopy(BASE)
            _set(data, key, int(good) if number.kind in ("int", "size") else good)
            path.write_text(yaml.safe_dump(data))
            load_config(path, env={}, search=False)


def _numeric_fields(cls: type, path: str, seen: frozenset[type] = frozenset()) -> list[str]:
    """Dotted paths of every int/float field in the dataclass tree under ``cls`` (list and mapping values too)."""
    if cls in seen:
        return []
    found: list[str] = []
    hints = typing.get_type_hints(cls, localns=vars(config_module))
    for f in dataclasses.fields(cls):
        stack = [hints[f.name]]
        while stack:
            hint = stack.pop()
            if hint in (int, float):
                found.append(f"{path}{f.name}")
            elif dataclasses.is_dataclass(hint) and isinstance(hint, type):
                found += _numeric_fields(hint, f"{path}{f.name}.", seen | {cls})
            else:
                stack.extend(typing.get_args(hint))
    return found


def test_every_numeric_field_of_the_config_is_a_numeric_key():
    """A number added to a Config dataclass but parsed by hand (past the schema) fails here."""
    leaves = {re.split(r"[.\[]", key)[-1].rstrip("]") for key in KEYS}
    fields = _numeric_fields(Config, "")
    assert len(fields) >= 40
    for field in fields:
        name = field.rsplit(".", 1)[-1]
        if name in NOT_KEYS:
            continue
        assert ALIASES.get(name, name) in leaves, f"{field} is not parsed as a numeric key with a range"


def _platform_settings(monkeypatch: pytest.MonkeyPatch) -> dict[str, type]:
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "telegram,whatsapp,slack,discord")
    plugins = make_plugins()
    return {name: reg.platform.settings for name, reg in plugins.platforms().items()
            if reg.platform.settings is not None}


def test_every_number_of_every_platform_section_refuses_nan_infinities_and_out_of_range(monkeypatch):
    settings = _platform_settings(monkeypatch)
    assert {"telegram", "whatsapp", "slack", "discord"} <= set(settings)
    walked = 0
    for platform, settings_type in settings.items():
        for name, (kind, minimum, maximum) in number_fields(settings_type).items():
            key = f"platforms.{platform}.{name}"
            assert minimum is not None and maximum is not None, f"{key}: declare its range with setting()"
            whole = kind is int
            for bad in (float("nan"), float("inf"), float("-inf"), minimum - 1, maximum + (1 if whole else maximum)):
                with pytest.raises(ConfigError) as caught:
                    parse_settings(settings_type, {name: bad}, platform=platform, source="c.yaml")
                line = str(caught.value)
                assert line.startswith(f"c.yaml: {key}: "), line
                assert f"from {show_number(minimum)} to {show_number(maximum)}" in line, line
            walked += 1
    assert walked >= 4  # telegram's poll_timeout, whatsapp's timeout, slack's api_timeout and stream starts


@pytest.mark.parametrize("value", [True, False, None, [1], "1e999", "nan", "inf"])
def test_the_number_parser_refuses_what_is_no_finite_number(value: Any):
    with pytest.raises(NumberError):
        parse_number(value, minimum=0, maximum=10)


def test_the_number_parser_takes_numbers_and_numeric_strings_in_range():
    assert parse_number("2.5", minimum=0, maximum=10) == 2.5
    assert parse_number(3.0, whole=True, minimum=0, maximum=10) == 3
    assert parse_number("7", whole=True) == 7
    with pytest.raises(NumberError, match="a whole number, got 2.5"):
        parse_number(2.5, whole=True)
    with pytest.raises(NumberError, match=r"a whole number from 1 to 64, got 10000000000000000000000000"):
        parse_number(10 ** 25, whole=True, minimum=1, maximum=64)
