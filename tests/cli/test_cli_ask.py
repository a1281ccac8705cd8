"""``hermes-gateway ask`` from the command line: the demo model streamed into a chat."""

from __future__ import annotations

import subprocess
import sys

from hermes_gateway import make_plugins

ECHO = ("Streaming into a chat means editing one message as the words arrive, "
        "never faster than the chat allows, and ending with the exact reply. ") * 3


def ask(tmp_path, *args: str, config: str | None = None) -> subprocess.CompletedProcess:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(config if config is not None else
                   "model:\n  demo:\n    tokens_per_second: 25\n"
                   "streaming:\n  enabled: true\n  edit_interval: 0.5\n  min_tokens: 5\n")
    return subprocess.run([sys.executable, "-m", "hermes_gateway", "ask", "--config", str(cfg), *args],
                          capture_output=True, text=True, timeout=120)


def test_ask_streams_the_demo_reply_into_the_reference_chat(tmp_path):
    result = ask(tmp_path, "--platform", "reference", "--chat", "1", "--show-calls", f"echo: {ECHO}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ECHO.strip() + "\n"
    calls = [line for line in result.stderr.splitlines() if line.startswith("[")]
    previews = [line for line in calls if line.startswith("[edit ok]") and line.endswith(" ▌'")]
    first_send = next(i for i, line in enumerate(calls) if line.startswith("[send ok]"))
    assert all(line.startswith("[typing ok]") for line in calls[:first_send]), "typing only before any text"
    assert not any(line.startswith("[typing") for line in calls[first_send:])
    assert "▌" in calls[first_send], "the first preview appears mid-reply"
    assert previews, "the message is edited while the reply streams"
    assert calls[-1].startswith("[edit ok]") and "▌" not in calls[-1]


def test_ask_with_streaming_off_sends_the_reply_once(tmp_path):
    result = ask(tmp_path, "--platform", "reference", "--chat", "1", "--show-calls", "echo: just once please",
                 config="model:\n  demo:\n    tokens_per_second: 0\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "just once please\n"
    kinds = [line.split("]")[0] + "]" for line in result.stderr.splitlines() if line.startswith("[")]
    assert kinds[-1] == "[send ok]" and set(kinds[:-1]) <= {"[typing ok]"}  # typing while nothing shows


def test_ask_hides_think_blocks(tmp_path):
    result = ask(tmp_path, "--platform", "reference", "--chat", "7", "--show-calls", "think: the visible answer")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the visible answer\n"
    assert "<think" not in result.stderr


def test_ask_an_unknown_platform_fails_with_the_known_ones_named(tmp_path):
    result = ask(tmp_path, "--platform", "refrence", "--chat", "1", "hi")
    assert result.returncode == 2
    known = ", ".join(sorted(make_plugins().platforms()))  # reference, and any plugin the test asked for
    assert result.stderr == f"hermes-gateway: unknown platform 'refrence' (did you mean reference?) (known: {known})\n"


def test_ask_exits_non_zero_when_delivery_ultimately_fails(tmp_path):
    site = tmp_path / "site"
    (site / "hg_down_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "hg_down_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: hg_down_plugin\n"
                                                                    "Version: 1.0\n")
    (site / "hg_down_plugin-1.0.dist-info" / "entry_points.txt").write_text("[hermes_gateway]\ndown = hg_down_plugin\n")
    (site / "hg_down_plugin.py").write_text(
        "import hermes_gateway\n"
        "@hermes_gateway.hookimpl\n"
        "def register_platforms(register):\n"
        "    register(hermes_gateway.Platform(name='down'))\n"
        "@hermes_gateway.hookimpl\n"
        "async def on_stream_end(stream, message, text):\n"
        "    raise hermes_gateway.DeliveryError('chat not found', retryable=False)\n")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("model:\n  demo:\n    tokens_per_second: 0\nplatforms:\n  down: {}\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(site), "HERMES_LOAD_PLUGINS": "down"}
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", "ask", "--config", str(cfg), "--platform", "down",
                             "--chat", "9", "echo: lost?"], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 1
    assert "delivery to down chat 9 failed: chat not found" in result.stderr
    assert result.stdout == "lost?\n", "the undelivered reply is printed, not lost"
    assert "Traceback" not in result.stderr


def test_when_the_model_is_down_the_chat_gets_a_notice_and_the_exit_code_says_so(tmp_path):
    result = ask(tmp_path, "--platform", "reference", "--chat", "1", "hi",
                 config="model:\n  base_url: http://127.0.0.1:9/v1\n  name: nothing\n  api_key: sk-secret-123\n"
                        "  timeouts: {connect: 1}\n")
    assert result.returncode == 1
    assert result.stdout.startswith("⚠️ Sorry, I could not get an answer from the model")
    assert "the model failed: the model is unavailable" in result.stderr
    assert "sk-secret-123" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_ask_shows_a_tools_image_after_the_text_as_the_reference_chat_received_it(tmp_path):
    media = tmp_path / "media"
    result = ask(tmp_path, "--platform", "reference", "--chat", "1", "--show-calls", 'tool: qr_code {"text": "hi"}',
                 config=f"model:\n  demo:\n    tokens_per_second: 0\nmedia:\n  directory: {media}\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("The tool qr_code returned: A QR code for 2 characters of text.\n"
                             "[image: qr.png attached]\n---\n[image: qr.png] hi\n")
    assert "[upload ok] '[image: qr.png] hi'" in result.stderr
    assert len(list(media.iterdir())) == 1


def test_the_readme_command_to_watch_pacing_shows_each_edit(tmp_path):
    """The guide's own command line (docs/platforms.md), run as written with no config file: the calls it prints
    include edits."""
    import os
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "docs" / "platforms.md").read_text(encoding="utf-8")
    [command] = re.findall(r"`([^`]*ask --platform reference[^`]*--show-calls[^`]*)`", readme)
    words = shlex.split(command.replace('"..."', shlex.quote(f"echo: {ECHO}")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(tmp_path / "home")
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words[0] == "hermes-gateway"
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", *words[1:]], capture_output=True, text=True,
                            timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    edits = [line for line in result.stderr.splitlines() if line.startswith("[edit ok]")]
    assert len(edits) >= 2, result.stderr[-1000:]
