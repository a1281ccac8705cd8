"""Configuration: precedence, and one clear line for every kind of bad file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway.config import load_config, parse_config
from hermes_gateway.errors import ConfigError


def test_defaults_use_the_demo_model_and_streaming_off():
    config = parse_config({}, env={})
    assert config.model.is_demo
    assert config.streaming_for("telegram").enabled is False
    assert config.streaming_for("telegram").edit_interval == 1.5
    assert config.streaming_for("telegram").min_tokens == 20


def test_per_platform_keys_beat_the_master_switch_and_the_env_var():
    data = {"streaming": {"enabled": False, "telegram": True, "discord": {"enabled": False, "edit_interval": 3}}}
    config = parse_config(data, env={"HERMES_STREAMING_ENABLED": "yes"})
    assert config.streaming_for("slack").enabled is True        # env replaces the master switch
    assert config.streaming_for("telegram").enabled is True
    assert config.streaming_for("discord").enabled is False      # per-platform wins over env
    assert config.streaming_for("discord").edit_interval == 3.0
    settings, origin = config.explain_streaming("slack")
    assert origin["enabled"] == "env HERMES_STREAMING_ENABLED"


@pytest.mark.parametrize("word,expected", [("true", True), ("1", True), ("on", True), ("No", False), ("off", False)])
def test_env_switch_words(word, expected):
    assert parse_config({}, env={"HERMES_STREAMING_ENABLED": word}).streaming_for("x").enabled is expected


def test_secrets_come_from_the_environment():
    config = parse_config({"model": {"base_url": "http://127.0.0.1:1/v1", "name": "m", "api_key": "${K}"}},
                          env={"K": "sk-secret"})
    assert config.model.endpoint.api_key == "sk-secret"
    assert "sk-secret" not in repr(config.model.endpoint)


BAD = [
    ("streaming:\n  enabled: [unclosed\n", "line 3, column 1", "valid YAML"),
    ("modle:\n  name: x\n", "modle", "unknown top-level key; expected one of model, streaming, platforms, api_server"),
    ("streaming:\n  enabled: maybe\n", "streaming.enabled", "true or false, got 'maybe'"),
    ("streaming:\n  edit_interval: -1\n", "streaming.edit_interval", "a number >= 0"),
    ("streaming:\n  telegram: sometimes\n", "streaming.telegram", "true/false or a mapping"),
    ("api_server:\n  port: http\n", "api_server.port", "a whole number, got 'http'"),
    ("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  api_key: ${HG_TEST_UNSET_KEY}\n", "model.api_key",
     "environment variable HG_TEST_UNSET_KEY to be set"),
    ("model:\n  api_mode: completions\n", "model.api_mode", "one of chat_completions, responses"),
    ("platforms:\n  telegram: 5\n", "platforms.telegram", "a mapping"),
    ("- just\n- a list\n", "(top level)", "a mapping of model, streaming, platforms, api_server"),
]


@pytest.mark.parametrize("text,key,expected", BAD, ids=[b[1] for b in BAD])
def test_a_bad_file_names_the_file_the_key_and_the_expectation(tmp_path, text, key, expected):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert message.startswith(f"{path}: {key}")
    assert expected in message
    assert "\n" not in message


def test_the_command_line_prints_one_line_and_no_traceback(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("streaming:\n  min_tokens: lots\n")
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (f"hermes-gateway: config error: {path}: streaming.min_tokens: "
                                     "a whole number, got 'lots'")


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: \\(file\\): file not found"):
        load_config(tmp_path / "nope.yaml", env={})


def test_the_config_command_shows_where_each_streaming_value_came_from(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  api_key: sk-do-not-print\n"
                    "  timeouts: {first_token: 33}\n"
                    "streaming:\n  enabled: true\n  min_tokens: 7\n  reference: {edit_interval: 4}\n"
                    "platforms:\n  telegram: {enabled: false, token: '123:tg-do-not-print'}\n")
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)],
                            capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "sk-do-not-print" not in result.stdout and "tg-do-not-print" not in result.stdout
    assert "first_token: 33" in result.stdout and "min_tokens: 7" in result.stdout  # not secrets
    assert "token: '***'" in result.stdout
    assert f"reference: on (from {path} (streaming.enabled)); edit_interval 4s (from {path} " \
           f"(streaming.reference.edit_interval))" in result.stdout
