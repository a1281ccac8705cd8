"""The config key this issue added: api_server.keepalive_interval."""

import pytest

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.errors import ConfigError


def test_keepalive_interval_default_and_value():
    assert parse_config({}, env={}).api_server.keepalive_interval == 15.0
    assert parse_config({"api_server": {"keepalive_interval": 0.5}}, env={}).api_server.keepalive_interval == 0.5


@pytest.mark.parametrize("value", [-1, "soon", [1]])
def test_bad_keepalive_interval_is_one_line(value):
    with pytest.raises(ConfigError) as info:
        parse_config({"api_server": {"keepalive_interval": value}}, source="c.yaml", env={})
    assert str(info.value).startswith("c.yaml: api_server.keepalive_interval: ")


def test_cors_origins_is_a_list_of_strings():
    assert parse_config({"api_server": {"cors_origins": ["https://a", "*"]}}, env={}).api_server.cors_origins == \
        ("https://a", "*")
    with pytest.raises(ConfigError, match="api_server.cors_origins"):
        parse_config({"api_server": {"cors_origins": [1]}}, env={})


def test_expose_reasoning_is_off_and_max_concurrent_streams_generous_by_default():
    api = parse_config({}, env={}).api_server
    assert api.expose_reasoning is False and api.max_concurrent_streams == 1000
    api = parse_config({"api_server": {"expose_reasoning": True, "max_concurrent_streams": 3}}, env={}).api_server
    assert api.expose_reasoning is True and api.max_concurrent_streams == 3


@pytest.mark.parametrize("key, value", [("expose_reasoning", [1]), ("max_concurrent_streams", 0),
                                        ("max_concurrent_streams", "many")])
def test_bad_new_keys_are_one_line(key, value):
    with pytest.raises(ConfigError) as info:
        parse_config({"api_server": {key: value}}, source="c.yaml", env={})
    assert str(info.value).startswith(f"c.yaml: api_server.{key}: ")
