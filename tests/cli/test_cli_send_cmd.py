"""``hermes-gateway send`` from the command line: what it refuses, each in one line, before anything is sent."""

from __future__ import annotations

import os
import subprocess
import sys


def send(tmp_path, *args: str, config: str = "model: {name: demo}\n", stdin: str = "") -> subprocess.CompletedProcess:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(config)
    env = {**os.environ, "HERMES_LOAD_PLUGINS": "telegram"}  # one installed platform besides the built-in
    return subprocess.run([sys.executable, "-m", "hermes_gateway", "send", "--config", str(cfg), *args],
                          capture_output=True, text=True, timeout=120, input=stdin, env=env)


def test_the_reference_platform_takes_a_message(tmp_path):
    result = send(tmp_path, "--platform", "reference", "--chat", "1", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_an_unknown_platform_names_the_known_ones(tmp_path):
    result = send(tmp_path, "--platform", "telegrm", "--chat", "1", "hi")
    assert result.returncode == 2
    assert result.stderr.startswith("hermes-gateway: unknown platform 'telegrm' (did you mean telegram?) (known: ")
    assert len(result.stderr.splitlines()) == 1


def test_a_platform_that_is_not_configured_is_refused(tmp_path):
    result = send(tmp_path, "--platform", "telegram", "--chat", "1", "hi")
    assert result.returncode == 2
    assert "platform telegram is not configured in " in result.stderr and len(result.stderr.splitlines()) == 1


def test_home_without_home_chat_names_the_key(tmp_path):
    result = send(tmp_path, "--platform", "reference", "--chat", "home", "hi")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("platforms.reference.home_chat: a chat id, since 'home' was asked for as "
                                          "the chat of reference")


def test_nothing_to_send_and_a_missing_file_are_refused(tmp_path):
    empty = send(tmp_path, "--platform", "reference", "--chat", "1", "-", stdin="  \n")
    assert empty.returncode == 2
    assert empty.stderr == "hermes-gateway: nothing to send: give TEXT, '-' for stdin, or --file PATH\n"
    missing = send(tmp_path, "--platform", "reference", "--chat", "1", "--file", str(tmp_path / "nope.pdf"), "x")
    assert missing.returncode == 2
    assert missing.stderr.startswith("hermes-gateway: cannot read ") and "nope.pdf" in missing.stderr


def test_an_unreachable_redis_is_one_line(tmp_path):
    result = send(tmp_path, "--platform", "reference", "--chat", "1", "hi",
                  config='coordination: {url: "redis://127.0.0.1:1/0"}\n')
    assert result.returncode == 1
    assert result.stderr.startswith("hermes-gateway: coordination: cannot reach Redis at 127.0.0.1:1 (")
    assert len(result.stderr.splitlines()) == 1


def test_a_disabled_platform_is_refused_in_ask_s_words(tmp_path):
    result = send(tmp_path, "--platform", "telegram", "--chat", "1", "hi",
                  config="model: {name: demo}\nplatforms:\n  telegram: {enabled: false}\n")
    assert result.returncode == 2
    assert result.stderr == (f"hermes-gateway: platform telegram is disabled in {tmp_path / 'config.yaml'}: set "
                             "platforms.telegram (enabled: true and its keys) to send into it\n")
