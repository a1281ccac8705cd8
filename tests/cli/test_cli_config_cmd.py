"""What a person sees from the commands when the config has a mistake: one line, the right exit code.

Every test runs the real ``hermes-gateway`` in a subprocess, as a person or a
script would, and reads its stderr, stdout and exit code.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import DEADLINE, child_env
from hermes_gateway import make_plugins

PREFIX = "hermes-gateway: config error: "
#: The platforms known here: the built-in reference (installed plugins load only when a test asks for them).
PLATFORMS = sorted(make_plugins().platforms())
KNOWN = ", ".join(PLATFORMS)
KNOWN_SECTIONS = ", ".join(sorted(["api_server", "cli", *PLATFORMS]))


def hermes(tmp_path: Path, *args: str, env: dict | None = None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "hermes_gateway", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=DEADLINE * 4, env={**child_env(home), **(env or {})}, cwd=tmp_path)


def config_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def slow_platform_site(tmp_path: Path) -> dict[str, str]:
    """An installed third-party plugin whose platform ``slowpoke`` allows one edit every 2 s (its floor)."""
    site = tmp_path / "site"
    info = site / "hg_slowpoke-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hg_slowpoke\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hermes_gateway]\nslowpoke = hg_slowpoke\n")
    (site / "hg_slowpoke.py").write_text(
        "import hermes_gateway\n"
        "@hermes_gateway.hookimpl\n"
        "def register_platforms(register):\n"
        "    register(hermes_gateway.Platform(name='slowpoke', edit_interval=2.0))\n"
        "@hermes_gateway.hookimpl\n"
        "async def on_stream_end(stream, message, text):\n"
        "    if stream.platform.name == 'slowpoke':\n"
        "        return hermes_gateway.MessageRef(stream.chat_id, '1')\n")
    return {"PYTHONPATH": str(site), "HERMES_LOAD_PLUGINS": "slowpoke"}


# -- unknown names ------------------------------------------------------------------------------------------

TYPOS = "platforms:\n  refrence: {enabled: true, token: '123:abc'}\nstreaming:\n  referense: true\n"


@pytest.mark.parametrize("command", [["run"], ["chat", "-m", "hi"], ["ask", "--platform", "reference", "--chat", "1",
                                                                      "hi"]])
def test_a_mistyped_platform_name_stops_every_command_with_the_closest_known_name(tmp_path, command):
    path = config_file(tmp_path, TYPOS)
    result = hermes(tmp_path, command[0], "--config", path, *command[1:])
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{PREFIX}{path}: platforms.refrence: the name of an installed platform (did you mean reference?); "
        f"known: {KNOWN}",
        f"{PREFIX}{path}: streaming.referense: a platform name or one of enabled, edit_interval, min_tokens, cursor "
        f"(did you mean reference?); known platforms: {KNOWN_SECTIONS}",
    ]


def test_a_mistyped_streaming_key_is_refused_too(tmp_path):
    path = config_file(tmp_path, "streaming:\n  enable: true\n")
    result = hermes(tmp_path, "chat", "--config", path, "-m", "hi")
    assert result.returncode == 2
    assert result.stderr == (f"{PREFIX}{path}: streaming.enable: a platform name or one of enabled, edit_interval, "
                             f"min_tokens, cursor (did you mean enabled?); known platforms: {KNOWN_SECTIONS}\n")


def test_config_and_plugins_still_show_everything_and_name_the_mistake(tmp_path):
    path = config_file(tmp_path, TYPOS)
    shown = hermes(tmp_path, "config", "--config", path)
    assert shown.returncode == 2
    assert shown.stderr.splitlines()[0] == (f"{PREFIX}{path}: platforms.refrence: the name of an installed platform "
                                            f"(did you mean reference?); known: {KNOWN}")
    assert "platforms:\n  refrence:\n    enabled: true\n    token: '***'\n" in shown.stdout
    assert "referense: not a known platform (did you mean reference?)" in shown.stdout
    listed = hermes(tmp_path, "plugins", "--config", path)
    assert listed.returncode == 2
    assert "reference  [disabled, streaming off]" in listed.stdout
    assert listed.stderr == shown.stderr


# -- the edit_interval floor and the env switch in `config` ----------------------------------------------------

def test_config_shows_a_floor_that_overrides_the_configured_interval(tmp_path):
    path = config_file(tmp_path, "streaming:\n  enabled: true\n  edit_interval: 0.5\n")
    result = hermes(tmp_path, "config", "--config", path, env=slow_platform_site(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (f"slowpoke: on (from {path} (streaming.enabled)); edit_interval 0.5s → 2s, slowpoke's floor "
            f"(from {path} (streaming.edit_interval)); min_tokens 20 (from default)") in result.stdout
    assert (f"reference: on (from {path} (streaming.enabled)); edit_interval 0.5s (from {path} "
            "(streaming.edit_interval))") in result.stdout  # no floor above 0.5 s there


def test_ask_warns_in_one_line_when_a_floor_raises_the_configured_interval(tmp_path):
    path = config_file(tmp_path, "model:\n  demo: {tokens_per_second: 0}\nstreaming:\n  slowpoke: "
                                 "{enabled: true, edit_interval: 0.5}\nplatforms:\n  slowpoke: {}\n")
    result = hermes(tmp_path, "ask", "--config", path, "--platform", "slowpoke", "--chat", "1", "echo: hi",
                    env=slow_platform_site(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("hermes-gateway: warning: streaming.slowpoke.edit_interval 0.5s is below slowpoke's "
                             "floor: edits into slowpoke are 2s apart\n")


def test_config_does_not_contradict_itself_when_the_env_switch_overrides_the_file(tmp_path):
    path = config_file(tmp_path, "streaming:\n  enabled: false\n")
    result = hermes(tmp_path, "config", "--config", path, env={"HERMES_STREAMING_ENABLED": "true"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"# streaming.enabled: true from env HERMES_STREAMING_ENABLED ({path} says false)" in out
    assert "streaming:\n  enabled: true\n" in out
    assert "enabled: false" not in out
    assert "cli: on (from env HERMES_STREAMING_ENABLED)" in out


# -- a reader that goes away -----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["config"], ["plugins"], ["chat", "-m", "echo: hi"],
                                     ["ask", "--platform", "reference", "--chat", "1", "echo: hi"]])
def test_a_closed_pipe_on_stdout_ends_quietly(tmp_path, command):
    """``hermes-gateway config | head -1``: the reader left before we wrote; no traceback, exit 141 like `yes`."""
    path = config_file(tmp_path, "model:\n  demo: {tokens_per_second: 0}\n")
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: every write gets EPIPE, deterministically
    try:
        result = hermes(tmp_path, command[0], "--config", path, *command[1:], stdout=write_end)
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141


def test_head_minus_one_shows_the_first_line_and_nothing_on_stderr(tmp_path):
    # A long system prompt: more output than a pipe holds, so `head` leaves while we still write.
    path = config_file(tmp_path, "model:\n  system_prompt: '" + "be brief. " * 30_000 + "'\n")
    home = tmp_path / "home"
    home.mkdir()
    command = shlex.join([sys.executable, "-m", "hermes_gateway", "config", "--config", str(path)]) + " | head -1"
    result = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=DEADLINE * 4, env=child_env(home))
    assert result.stdout == f"# source: {path}\n"
    assert result.stderr == ""


# -- ask checks the platform before the model ------------------------------------------------------------------

def test_ask_into_an_unconfigured_platform_fails_before_calling_the_model(tmp_path, demo_upstream):
    upstream = demo_upstream(0)
    path = config_file(tmp_path, f"model:\n  base_url: {upstream.base_url}\n  name: demo\n")
    result = hermes(tmp_path, "ask", "--config", path, "--platform", "slowpoke", "--chat", "42", "hello",
                    env=slow_platform_site(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (f"hermes-gateway: platform slowpoke is not configured in {path}: set "
                             "platforms.slowpoke (enabled: true and its keys) to send into it\n")
    assert upstream.requests == [], "the model was called for a reply that could not be delivered"


def test_ask_into_a_disabled_platform_says_disabled(tmp_path, demo_upstream):
    upstream = demo_upstream(0)
    path = config_file(tmp_path, f"model:\n  base_url: {upstream.base_url}\n  name: demo\n"
                                 "platforms:\n  slowpoke: {enabled: false}\n")
    result = hermes(tmp_path, "ask", "--config", path, "--platform", "slowpoke", "--chat", "42", "hello",
                    env=slow_platform_site(tmp_path))
    assert result.returncode == 2
    assert "platform slowpoke is disabled in" in result.stderr
    assert upstream.requests == []


# -- credentials in base_url never in log lines ----------------------------------------------------------------

def test_verbose_log_lines_mask_credentials_in_base_url(tmp_path, demo_upstream):
    upstream = demo_upstream(0)
    url = upstream.base_url.replace("http://", "http://alice:sk-url-secret-1@")
    path = config_file(tmp_path, f"model:\n  base_url: '{url}'\n  name: demo\n")
    result = hermes(tmp_path, "-vv", "chat", "--config", path, "-m", "echo: logged")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "logged\n"
    masked = upstream.base_url.replace("http://", "http://***@")
    assert f"HTTP Request: POST {masked}/chat/completions" in result.stderr
    assert "url-secret" not in result.stderr


# -- an enabled platform without its token ------------------------------------------------------------------

def tokened_platform_site(tmp_path: Path) -> dict[str, str]:
    """An installed third-party plugin whose platform ``tokened`` needs a ``token`` (a secret, required)."""
    site = tmp_path / "site"
    info = site / "hg_tokened-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hg_tokened\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hermes_gateway]\ntokened = hg_tokened\n")
    (site / "hg_tokened.py").write_text(
        "import dataclasses\n"
        "import hermes_gateway\n"
        "@dataclasses.dataclass\n"
        "class Settings:\n"
        "    token: str = hermes_gateway.secret()\n"
        "@hermes_gateway.hookimpl\n"
        "def register_platforms(register):\n"
        "    register(hermes_gateway.Platform(name='tokened', settings=Settings))\n"
        "@hermes_gateway.hookimpl\n"
        "async def on_stream_end(stream, message, text):\n"
        "    if stream.platform.name == 'tokened':\n"
        "        return hermes_gateway.MessageRef(stream.chat_id, '1')\n")
    return {"PYTHONPATH": str(site), "HERMES_LOAD_PLUGINS": "tokened"}


def test_config_exits_2_like_run_when_an_enabled_platform_lacks_its_token(tmp_path):
    env = tokened_platform_site(tmp_path)
    path = config_file(tmp_path, "platforms:\n  tokened:\n    enabled: true\n")
    shown = hermes(tmp_path, "config", "--config", path, env=env)
    assert shown.returncode == 2, shown.stderr
    assert f"{PREFIX}{path}: platforms.tokened.token: " in shown.stderr
    assert "platforms:\n  tokened:\n    enabled: true" in shown.stdout, "the rest is still shown"
    path = config_file(tmp_path, "platforms:\n  tokened:\n    enabled: true\n    token: abc123\n")
    fine = hermes(tmp_path, "config", "--config", path, env=env)
    assert fine.returncode == 0, fine.stderr
    assert "abc123" not in fine.stdout


def test_config_shows_the_reactions_and_on_edit(tmp_path):
    path = config_file(tmp_path, "reactions:\n  received: \"👀\"\n  done: null\nconversation:\n  on_edit: ignore\n")
    result = hermes(tmp_path, "config", "--config", path)
    assert result.returncode == 0, result.stderr
    assert "reactions:" in result.stdout and "received: 👀" in result.stdout and "failed: null" in result.stdout
    assert "on_edit: ignore" in result.stdout
