"""``hermes-gateway chat -m MESSAGE`` (and a message on stdin), run as a real process with the demo model."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

from cli_helpers import DEADLINE, child_env, write_config

ECHO_WORDS = " ".join(f"word{i}" for i in range(30))


def run_chat(tmp_path, *args, input=None, tokens_per_second=0, streaming=True, config=None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    config = config or write_config(tmp_path, tokens_per_second=tokens_per_second, streaming=streaming)
    return subprocess.run(
        [sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config), *args],
        input=input, capture_output=True, text=True, env=child_env(home), cwd=tmp_path, timeout=DEADLINE,
    )


def test_stdout_is_exactly_the_reply(tmp_path):
    done = run_chat(tmp_path, "-m", "echo: Hello, terminal world!  Two spaces, and *markdown*.")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, terminal world!  Two spaces, and *markdown*.\n"
    assert done.stderr == ""


def test_a_message_on_stdin_is_answered_once(tmp_path):
    done = run_chat(tmp_path, input="echo: piped in\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "piped in\n"


def test_think_blocks_never_reach_stdout(tmp_path):
    done = run_chat(tmp_path, "-m", "think: the visible answer")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the visible answer\n"


def test_with_streaming_off_stdout_is_the_same_reply(tmp_path):
    done = run_chat(tmp_path, "-m", f"echo: {ECHO_WORDS}", streaming=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ECHO_WORDS + "\n"


def test_a_pipe_receives_the_first_words_while_the_model_is_still_generating(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    config = write_config(tmp_path, tokens_per_second=20, streaming=True)  # 30 words: about 1.5 s
    chunks: list[bytes] = []
    alive_at_first_bytes = None
    with subprocess.Popen(
        [sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config), "-m", f"echo: {ECHO_WORDS}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(home), cwd=tmp_path,
    ) as proc:
        try:
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                ready, _, _ = select.select([proc.stdout], [], [], 1.0)
                if not ready:
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                if not chunks:
                    alive_at_first_bytes = proc.poll() is None
                chunks.append(chunk)
            errors = proc.stderr.read().decode()
            proc.wait(timeout=DEADLINE)
        finally:
            proc.kill()
    output = b"".join(chunks).decode()
    assert proc.returncode == 0, errors
    assert output == ECHO_WORDS + "\n"
    assert alive_at_first_bytes, "the first bytes came only after the process had finished"
    first = chunks[0].decode()
    assert first.startswith("word0") and len(first) < len(ECHO_WORDS) / 2, (
        f"the first read already held {first!r}: the reply was not streamed")
    assert len(chunks) >= 3


def test_by_default_a_script_gets_the_reply_whole_in_one_piece(tmp_path):
    """No streaming switch anywhere: ``-m`` prints the finished reply at once (what a script captures)."""
    home = tmp_path / "home"
    home.mkdir()
    config = write_config(tmp_path, tokens_per_second=20)  # no streaming keys at all; 30 words take about 1.5 s
    with subprocess.Popen(
        [sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config), "-m", f"echo: {ECHO_WORDS}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(home), cwd=tmp_path,
    ) as proc:
        try:
            ready, _, _ = select.select([proc.stdout], [], [], DEADLINE)
            first = os.read(proc.stdout.fileno(), 65536).decode() if ready else ""
            rest = proc.stdout.read().decode()
            errors = proc.stderr.read().decode()
            proc.wait(timeout=DEADLINE)
        finally:
            proc.kill()
    assert proc.returncode == 0, errors
    assert first + rest == ECHO_WORDS + "\n"
    assert first.startswith(ECHO_WORDS), f"the first read held only {first!r}: the reply was streamed"


def test_an_upstream_error_is_one_line_on_stderr_and_a_failing_exit(tmp_path):
    config = tmp_path / "broken.yaml"
    config.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  name: some-model\n  api_key: sk-secret-value\n"
                      "  timeouts:\n    connect: 2\n", encoding="utf-8")
    done = run_chat(tmp_path, "-m", "hello", config=config)
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hermes-gateway: ")
    assert "Traceback" not in done.stderr
    assert "sk-secret-value" not in done.stderr


def test_an_empty_message_on_stdin_is_refused_clearly(tmp_path):
    done = run_chat(tmp_path, input="   \n")
    assert done.returncode == 2
    assert "no message" in done.stderr
    assert done.stdout == ""


def test_the_bare_command_answers_a_piped_message(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    write_config(tmp_path, tokens_per_second=0)  # ./config.yaml is found by itself
    done = subprocess.run([sys.executable, "-m", "hermes_gateway"], input="echo: no subcommand needed",
                          capture_output=True, text=True, env=child_env(home), cwd=tmp_path, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no subcommand needed\n"


def test_ctrl_c_stops_a_one_shot_reply_quietly_keeping_what_was_printed(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    config = write_config(tmp_path, tokens_per_second=20, streaming=True)
    words = " ".join(f"w{i}" for i in range(200))  # about 10 s if nothing stops it
    # A person's Ctrl-C reaches a program whose SIGINT is as a terminal leaves it. A suite started as a background
    # job of a non-interactive shell (`cmd &`, as CI scripts and nohup do) has SIGINT ignored (POSIX), and so do
    # its workers and the children they start, which rightly keep it (the reply then ran to its end: exit 0). The
    # child therefore starts from a one-line launcher that puts SIGINT back to the default before exec.
    launcher = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); os.execv(sys.executable, sys.argv[1:])")
    with subprocess.Popen(
        [sys.executable, "-c", launcher, sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config),
         "-m", f"echo: {words}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(home), cwd=tmp_path,
    ) as proc:
        try:
            first = os.read(proc.stdout.fileno(), 65536)
            proc.send_signal(signal.SIGINT)
            rest, errors = proc.communicate(timeout=DEADLINE)
        finally:
            proc.kill()
    printed = (first + rest).decode()
    assert proc.returncode == 130, (len(first), printed[-120:], errors.decode(errors="replace")[-600:])
    assert printed.startswith("w0") and words.startswith(printed.strip()) and len(printed) < len(words)
    assert b"Traceback" not in errors


def test_a_broken_stream_is_replaced_on_a_new_line_and_stderr_says_so(tmp_path, demo_upstream):
    words = " ".join(f"redo{i:02d}" for i in range(30))
    upstream = demo_upstream(tokens_per_second=20, drop_first_stream_after=8)
    config = tmp_path / "http.yaml"
    config.write_text(f"model:\n  base_url: {upstream.base_url}\n  name: demo\n  api_key: test-key\n"
                      "streaming:\n  cli: true\n", encoding="utf-8")
    done = run_chat(tmp_path, "-m", f"echo: {words}", config=config)
    assert done.returncode == 0, done.stderr
    partial, replacement = done.stdout.split("\n", 1)
    assert partial and words.startswith(partial) and partial != words
    assert replacement == words + "\n"
    assert done.stderr.startswith("↻ ") and len(done.stderr.splitlines()) == 1


def test_a_tool_call_leaves_stdout_to_the_reply_and_a_redirected_stderr_quiet(tmp_path):
    done = run_chat(tmp_path, "-m", 'tool: calculate {"expression": "6 * 7"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The tool calculate returned: 42\n"
    assert done.stderr == ""


def test_a_tools_media_follows_the_reply_as_one_path_per_line(tmp_path):
    done = run_chat(tmp_path, "-m", 'tool: qr_code {"text": "hello"}')
    assert done.returncode == 0, done.stderr
    (png,) = (tmp_path / "home" / ".hermes" / "media").iterdir()
    assert done.stdout == ("The tool qr_code returned: A QR code for 5 characters of text.\n"
                           f"[image: qr.png attached]\n{png}\n")
    assert png.read_bytes().startswith(b"\x89PNG") and done.stderr == ""
