"""Configuration: precedence, and one clear line for every kind of bad file."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_gateway._core.config import load_config, parse_config
from hermes_gateway._core.errors import ConfigError


def test_defaults_use_the_demo_model_and_streaming_off():
    config = parse_config({}, env={})
    assert config.model.is_demo
    assert config.streaming_for("telegram").enabled is False
    assert config.streaming_for("telegram").edit_interval == 1.5
    assert config.streaming_for("telegram").min_tokens == 20


def test_model_transport_defaults_to_fast_and_takes_sdk():
    assert parse_config({}, env={}).model.transport == "fast"
    assert parse_config({"model": {"transport": "sdk"}}, env={}).model.transport == "sdk"


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
    ("modle:\n  name: x\n", "modle", "(did you mean model?)"),
    ("model:\n  nmae: x\n", "model.nmae", "(did you mean name?)"),
    ("streaming:\n  enabled: maybe\n", "streaming.enabled", "true or false, got 'maybe'"),
    ("streaming:\n  edit_interval: -1\n", "streaming.edit_interval", "a number from 0 to 3,600"),
    ("streaming:\n  telegram: sometimes\n", "streaming.telegram", "true/false or a mapping"),
    ("api_server:\n  port: http\n", "api_server.port", "a whole number from 0 to 65,535, got 'http'"),
    ("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  api_key: ${HG_TEST_UNSET_KEY}\n", "model.api_key",
     "environment variable HG_TEST_UNSET_KEY to be set"),
    ("model:\n  api_mode: completions\n", "model.api_mode", "one of chat_completions, responses"),
    ("model:\n  transport: httpx\n", "model.transport", "one of fast, sdk"),
    ("model:\n  vision: sometimes\n", "model.vision", "true or false, got 'sometimes'"),
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
                                     "a whole number from 0 to 1,000,000, got 'lots'")


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
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "HERMES_LOAD_PLUGINS": "telegram"})
    assert result.returncode == 0, result.stderr
    assert "sk-do-not-print" not in result.stdout and "tg-do-not-print" not in result.stdout
    assert "first_token: 33" in result.stdout and "min_tokens: 7" in result.stdout  # not secrets
    assert "token: '***'" in result.stdout
    assert f"reference: on (from {path} (streaming.enabled)); edit_interval 4s (from {path} " \
           f"(streaming.reference.edit_interval))" in result.stdout


# -- every mistake one line, none silent (issue 8, section 5) ----------------------------------------------------

def hermes(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """The real command, as a person runs it: no streaming switch or config path from outside (HERMES_HOME stays)."""
    base = {k: v for k, v in __import__("os").environ.items() if k not in ("HERMES_STREAMING_ENABLED", "HERMES_CONFIG")}
    return subprocess.run([sys.executable, "-m", "hermes_gateway", *args], capture_output=True, text=True,
                          timeout=120, env={**base, **(env or {})}, cwd=cwd)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The single stderr line of a config error (and nothing else, no traceback)."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hermes-gateway: config error: ")
    return lines[0][len("hermes-gateway: config error: "):]


BAD_MORE = [
    ("a: 1\nmodel:\n  name: x\n  name: y\n", "line 4", "each key once; 'name' is already set at line 3"),
    ("model:\n  base_url: api.openai.com/v1\n  name: m\n", "model.base_url",
     "an http:// or https:// URL such as https://api.openai.com/v1, got 'api.openai.com/v1'"),
    ("model:\n  base_url: ftp://host/v1\n  name: m\n", "model.base_url", "an http:// or https:// URL"),
    ("model:\n  api_key: 'sk-one sk-two'\n", "model.api_key", "a key without spaces or line breaks inside"),
    ("api_server:\n  api_keys: [good, also-good, 'two keys']\n", "api_server.api_keys[2]",
     "a key without spaces or line breaks inside"),
    ("api_server:\n  api_keys: [good, also-good, 7]\n", "api_server.api_keys[2]", "a string, got a number"),
    ("api_server:\n  cors_origins: [https://a.example, '']\n", "api_server.cors_origins[1]",
     "a non-empty string, got ''"),
    ("model:\n  api_key: ${HG_TEST_KEY-fallback}\n", "model.api_key",
     "${NAME} or ${NAME:-default} to use an environment variable, got '${HG_TEST_KEY-fallback}'"),
    ("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  fallback:\n    - {name: backup}\n",
     "model.fallback[0].base_url", "the URL of the endpoint to fall back to (for the built-in demo model write "
     "`- demo` instead)"),
    ("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m\n  fallback:\n    - base_url: http://127.0.0.1:8/v1\n",
     "model.fallback[0].name", "the model name to request from this fallback's base_url"),
    ("model:\n  fallback: [demmo]\n", "model.fallback[0]",
     "an endpoint {base_url: ..., name: ...} or the word demo (the built-in demo model), got 'demmo'"),
]


@pytest.mark.parametrize("text,key,expected", BAD_MORE, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD_MORE)])
def test_more_mistakes_name_the_file_the_key_and_the_expectation(tmp_path, text, key, expected):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert str(info.value) == f"{path}: {key}: {expected}" or \
        (str(info.value).startswith(f"{path}: {key}: ") and expected in str(info.value))
    assert "\n" not in str(info.value)


def test_a_powershell_utf16_file_with_a_bom_is_read(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes("streaming:\n  min_tokens: 7\nmodel:\n  system_prompt: Réponds en français\n".encode("utf-16"))
    assert path.read_bytes()[:2] == b"\xff\xfe"  # what `> config.yaml` writes in Windows PowerShell 5
    result = hermes("config", "--config", str(path))
    assert result.returncode == 0, result.stderr
    assert "min_tokens: 7" in result.stdout and "system_prompt: Réponds en français" in result.stdout


def test_a_utf8_file_with_a_bom_is_read(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"\xef\xbb\xbfstreaming:\n  min_tokens: 9\n")
    assert load_config(path, env={}).streaming.min_tokens == 9


def test_a_latin1_file_is_one_line_naming_the_file_the_place_and_the_expectation(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes("model:\n  system_prompt: Réponds\n".encode("latin-1"))
    assert one_error_line(hermes("config", "--config", str(path))) == (
        f"{path}: line 2, column 19: UTF-8 text; byte 0xe9 is not UTF-8 (Latin-1 or Windows-1252?): "
        "save the file as UTF-8")


def test_utf16_without_a_bom_is_named_as_such(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes("streaming:\n  cli: true\n".encode("utf-16-le"))
    assert one_error_line(hermes("config", "--config", str(path))) == (
        f"{path}: (file): UTF-8 text; it looks like UTF-16 without a byte-order mark (save it as UTF-8)")


def test_a_duplicate_key_is_one_line_with_both_lines(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("platforms:\n  reference: {enabled: true}\nstreaming:\n  cli: true\n  cli: false\n")
    assert one_error_line(hermes("config", "--config", str(path))) == (
        f"{path}: line 5: each key once; 'cli' is already set at line 4 (a duplicate would silently win)")


def test_merge_keys_may_still_be_overridden():
    import yaml

    from hermes_gateway._core.config import _UniqueKeyLoader
    text = "base: &b {edit_interval: 2, min_tokens: 3}\nx:\n  <<: *b\n  min_tokens: 5\n"
    assert yaml.load(text, Loader=_UniqueKeyLoader)["x"] == {"edit_interval": 2, "min_tokens": 5}


def test_env_default_form_is_used_when_the_variable_is_unset_or_empty():
    data = {"model": {"base_url": "${HG_URL:-http://127.0.0.1:11434/v1}", "name": "${HG_NAME:-llama3.1}",
                      "api_key": "${HG_KEY:-}"}}
    config = parse_config(data, env={"HG_NAME": ""})
    assert config.model.endpoint.base_url == "http://127.0.0.1:11434/v1"
    assert config.model.endpoint.name == "llama3.1"
    assert config.model.endpoint.api_key is None
    assert parse_config(data, env={"HG_NAME": "qwen3"}).model.endpoint.name == "qwen3"


def test_every_missing_variable_is_reported_at_once_in_one_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: https://api.example/v1\n  name: m\n  api_key: ${HG_OPENAI_KEY}\n"
                    "platforms:\n  reference: {token: '${HG_TG_TOKEN}'}\n"
                    "api_server:\n  api_keys: [fixed-key, '${HG_API_KEY}']\n")
    result = hermes("run", "--config", str(path))
    assert one_error_line(result) == (
        f"{path}: model.api_key, platforms.reference.token, api_server.api_keys[1]: environment variables "
        "HG_OPENAI_KEY, HG_TG_TOKEN, HG_API_KEY to be set (used as ${HG_OPENAI_KEY}, ${HG_TG_TOKEN}, ${HG_API_KEY})")


def test_config_still_shows_the_rest_with_the_unset_values_marked(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: https://api.example/v1\n  name: gpt-4o-mini\n  api_key: ${HG_OPENAI_KEY}\n"
                    "streaming:\n  min_tokens: 11\n"
                    "api_server:\n  api_keys: [fixed-key, '${HG_API_KEY}']\n")
    result = hermes("config", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr == (f"hermes-gateway: config error: {path}: model.api_key, api_server.api_keys[1]: "
                             "environment variables HG_OPENAI_KEY, HG_API_KEY to be set "
                             "(used as ${HG_OPENAI_KEY}, ${HG_API_KEY})\n")
    out = result.stdout
    assert "# not set: HG_OPENAI_KEY (model.api_key), HG_API_KEY (api_server.api_keys[1])" in out
    assert "  name: gpt-4o-mini\n" in out and "  min_tokens: 11\n" in out
    assert "  api_key: '<unset: HG_OPENAI_KEY>'\n" in out
    assert "  api_keys:\n  - '***'\n  - '<unset: HG_API_KEY>'\n" in out
    assert "fixed-key" not in out


def test_api_keys_lose_a_trailing_newline_from_cat(tmp_path):
    config = parse_config({"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m", "api_key": "${K}"},
                           "api_server": {"api_keys": ["${K}"]}}, env={"K": "sk-from-a-file\n"})
    assert config.model.endpoint.api_key == "sk-from-a-file"
    assert config.api_server.api_keys == ("sk-from-a-file",)


def test_a_fallback_without_base_url_is_refused_before_the_primary_is_even_tried(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  name: primary\n  timeouts: {connect: 1}\n"
                    "  fallback:\n    - {name: backup}\n")
    result = hermes("chat", "--config", str(path), "-m", "hello there")
    assert result.stdout == ""  # no canned demo greeting
    assert one_error_line(result) == (f"{path}: model.fallback[0].base_url: the URL of the endpoint to fall back to "
                                      "(for the built-in demo model write `- demo` instead)")


def test_demo_named_explicitly_is_a_working_fallback(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  name: primary\n  timeouts: {connect: 1}\n"
                    "  demo: {tokens_per_second: 0}\n  fallback:\n    - demo\n")
    result = hermes("chat", "--config", str(path), "-m", "echo: answered by the demo")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answered by the demo\n"


CREDENTIAL_URL = "https://alice:sk-url-secret-1@127.0.0.1:9/v1?key=qk-url-secret-2&api-version=2024-06-01"


def test_credentials_in_base_url_are_masked_in_config_output(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(f"model:\n  base_url: '{CREDENTIAL_URL}'\n  name: m\n")
    result = hermes("config", "--config", str(path))
    assert result.returncode == 0, result.stderr
    assert "base_url: https://***@127.0.0.1:9/v1?key=***&api-version=2024-06-01" in result.stdout
    assert "url-secret" not in result.stdout + result.stderr


def test_credentials_in_a_bad_base_url_are_masked_in_the_error(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  base_url: 'alice:sk-url-secret-1@api.example/v1?token=tk-url-secret-3'\n  name: m\n")
    line = one_error_line(hermes("config", "--config", str(path)))
    assert line.startswith(f"{path}: model.base_url: an http:// or https:// URL")
    assert "'***@api.example/v1?token=***'" in line and "url-secret" not in line


def test_credentials_in_base_url_are_masked_in_the_model_error_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(f"model:\n  base_url: '{CREDENTIAL_URL}'\n  name: m\n  timeouts: {{connect: 1}}\n")
    result = hermes("chat", "--config", str(path), "-m", "hi")
    assert result.returncode == 1
    assert result.stderr.startswith("hermes-gateway: the model is unavailable: "
                                    "m at https://***@127.0.0.1:9/v1?key=***&api-version=2024-06-01 (")
    assert "url-secret" not in result.stderr


def test_endpoint_repr_masks_url_credentials():
    from hermes_gateway._core.config import Endpoint
    text = repr(Endpoint(base_url=CREDENTIAL_URL, name="m", api_key="sk-k"))
    assert "url-secret" not in text and "sk-k" not in text and "https://***@127.0.0.1:9/v1" in text


def test_the_media_section_names_its_directory_and_limits(tmp_path):
    from hermes_gateway._core.config import parse_config

    default = parse_config({}, env={"HERMES_HOME": str(tmp_path)})
    assert default.media.path({"HERMES_HOME": str(tmp_path)}) == tmp_path / "media"
    custom = parse_config({"media": {"directory": "~/files", "url_ttl": 60, "inline_max_bytes": 1000}}, env={})
    assert str(custom.media.path()).endswith("/files") and custom.media.url_ttl == 60
    with pytest.raises(ConfigError, match="media.url_ttl"):
        parse_config({"media": {"url_ttl": 0}}, env={})
    with pytest.raises(ConfigError, match="media.directry: unknown key; expected one of directory"):
        parse_config({"media": {"directry": "/x"}}, env={})


def test_after_crash_is_note_by_default_or_retry(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  name: m\n")
    assert load_config(path, env={}).conversation.after_crash == "note"
    path.write_text("conversation:\n  after_crash: retry\n")
    assert load_config(path, env={}).conversation.after_crash == "retry"


@pytest.mark.parametrize("value,expected", [("again", "retry"), ("Note", "retry"), ("1", "a string"),
                                            ("[note]", "a string")])
def test_a_bad_after_crash_is_one_line_naming_file_key_and_expectation(tmp_path, value, expected):
    path = tmp_path / "config.yaml"
    path.write_text(f"conversation:\n  after_crash: {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert message.startswith(f"{path}: conversation.after_crash: ") and expected in message
    assert "\n" not in message


BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]" for p, x in zip("abcdefgh", "bcdefghi")]) + "\n"


def test_a_yaml_alias_bomb_is_one_line_at_once_not_a_hang(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(BILLION_LAUGHS)  # nine lines for 9**9 (387 million) strings
    for command in ("config", "run"):
        done = subprocess.run([sys.executable, "-m", "hermes_gateway", command, "--config", str(path)],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, done.stderr[-500:]
        [line] = done.stderr.strip().splitlines()
        assert str(path) in line and "(yaml)" in line and "aliases" in line


def test_aliases_within_reason_are_still_expanded(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("x-defaults: &fast {edit_interval: 0.5, min_tokens: 3}\n"
                    "streaming: {telegram: *fast, discord: *fast}\n")
    with pytest.raises(ConfigError, match="x-defaults"):  # unknown top-level key: the aliases themselves loaded
        load_config(path, env={})
    path.write_text("streaming:\n  telegram: &fast {edit_interval: 0.5, min_tokens: 3}\n  discord: *fast\n")
    config = load_config(path, env={})
    assert config.streaming_for("discord").edit_interval == 0.5


def test_inbound_file_limits_have_defaults_under_the_platforms_caps():
    config = parse_config({})
    mb = 1024 * 1024
    assert config.media.inbound_max_bytes == {"image": 20 * mb, "document": 20 * mb, "audio": 25 * mb,
                                              "voice": 25 * mb, "video": 50 * mb, "sticker": 5 * mb}
    assert (config.media.image_max_side, config.media.document_max_chars, config.store.history_images) == \
        (1568, 20_000, 2)


def test_inbound_file_limits_take_bytes_or_sizes_per_kind_or_for_all():
    config = parse_config({"media": {"inbound_max_bytes": {"image": "10 MB", "video": 5_000_000, "voice": "1.5 MiB"},
                                     "image_max_side": 1024, "document_max_chars": 500},
                           "store": {"history_images": 0}})
    limits = config.media.inbound_max_bytes
    assert (limits["image"], limits["video"], limits["voice"], limits["document"]) == \
        (10 * 1024 * 1024, 5_000_000, 1_572_864, 20 * 1024 * 1024)  # MB as chat apps count them: 1024 x 1024
    assert (config.media.image_max_side, config.media.document_max_chars, config.store.history_images) == (1024, 500, 0)
    assert set(parse_config({"media": {"inbound_max_bytes": "1 KB"}}).media.inbound_max_bytes.values()) == {1024}


@pytest.mark.parametrize("section,line", [
    ({"media": {"inbound_max_bytes": {"imgae": 1}}},
     "c.yaml: media.inbound_max_bytes.imgae: unknown kind; expected one of image, document, audio, voice, video, "
     "sticker (did you mean image?)"),
    ({"media": {"inbound_max_bytes": {"image": "lots"}}},
     "c.yaml: media.inbound_max_bytes.image: a size in bytes such as 20971520 or \"20 MB\", from 0 to 64 GiB, got 'lots'"),
    ({"media": {"inbound_max_bytes": -1}},
     "c.yaml: media.inbound_max_bytes: a size in bytes such as 20971520 or \"20 MB\", from 0 to 64 GiB, got -1"),
    ({"media": {"image_max_side": 8}}, "c.yaml: media.image_max_side: a whole number from 16 to 16,384, got 8"),
    ({"media": {"document_max_chars": "many"}}, "c.yaml: media.document_max_chars: a whole number from 100 to 100,000,000, got 'many'"),
    ({"store": {"history_images": -1}}, "c.yaml: store.history_images: a whole number from 0 to 1,000, got -1"),
])
def test_bad_inbound_file_settings_are_one_line_naming_the_key(section, line):
    with pytest.raises(ConfigError) as caught:
        parse_config(section, source="c.yaml")
    assert str(caught.value) == line


def test_a_fallback_may_say_whether_its_model_sees():
    config = parse_config({"model": {"base_url": "http://a/v1", "name": "a", "vision": True, "fallback": [
        {"base_url": "http://b/v1", "name": "b", "vision": False}, {"base_url": "http://c/v1", "name": "c"}]}})
    assert [f.vision for f in config.model.fallback] == [False, None]  # None: as model.vision
    with pytest.raises(ConfigError, match=r"model.fallback\[0\].vision: true or false, got 'maybe'"):
        parse_config({"model": {"base_url": "http://a/v1", "name": "a",
                                "fallback": [{"base_url": "http://b/v1", "name": "b", "vision": "maybe"}]}})
