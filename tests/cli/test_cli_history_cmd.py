"""``hermes-gateway history``, run as a real process against a store file the test makes."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys

import pytest

from cli_helpers import DEADLINE, child_env
from hermes_gateway._core.store import ConversationKey, SQLiteStore

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def make_store(path, build) -> None:
    async def go():
        clock = Clock()
        store = SQLiteStore(path, clock=clock)
        try:
            await build(store, clock)
        finally:
            await store.close()
    asyncio.run(go())


def history(tmp_path, *args, shell_tail: str = ""):
    env = {**child_env(tmp_path / "home"), "HERMES_HOME": str(tmp_path / "data"), "TZ": "UTC"}
    if shell_tail:
        command = shlex.join([sys.executable, "-m", "hermes_gateway", "history", *args]) + " " + shell_tail
        return subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=DEADLINE)
    return subprocess.run([sys.executable, "-m", "hermes_gateway", "history", *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=DEADLINE)


async def three_chats(store, clock):
    await store.record_turn(ConversationKey("telegram", "-100123", "7"),
                            [{"role": "user", "content": "what's the weather\nin Lisbon?"},
                             {"role": "assistant", "content": "Sunny."}])
    clock.now += 3600
    await store.record_turn(ConversationKey("cli", "local"), [
        {"role": "user", "content": "what time is it?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{\"tz\": \"UTC\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "22:13\nUTC"},
        {"role": "assistant", "content": "It is 22:13.\n\nLate!"}])
    clock.now += 60
    await store.new_conversation(ConversationKey("telegram", "-100123", "7"))
    await store.record_turn(ConversationKey("telegram", "-100123", "7"),
                            [{"role": "user", "content": "x" * 300}, {"role": "assistant", "content": "ok"}])


def test_the_list_is_newest_first_with_the_first_message_clipped(tmp_path):
    make_store(tmp_path / "data" / "state.db", three_chats)
    done = history(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "ID  LAST ACTIVITY     PLATFORM  CHAT     THREAD  TURNS  FIRST MESSAGE",
        " 3  2023-11-14 23:14  telegram  -100123  7           1  " + "x" * 43 + "…",
        " 2  2023-11-14 23:13  cli       local    -           1  what time is it?",
        " 1  2023-11-14 22:13  telegram  -100123  7           1  what's the weather in Lisbon?",
    ]
    assert all(len(line) <= 100 for line in done.stdout.splitlines())
    assert history(tmp_path, "-n", "1").stdout.splitlines()[1].startswith(" 3  ")


def test_one_conversation_shows_its_turns_and_each_tool_call_on_one_line(tmp_path):
    make_store(tmp_path / "data" / "state.db", three_chats)
    done = history(tmp_path, "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "conversation 2 · cli local · 1 turn · started 2023-11-14 at 23:13, last activity 2023-11-14 at 23:13",
        "",
        "you: what time is it?",
        '  → clock({"tz": "UTC"})',
        "  ← result: 22:13 UTC",
        "",
        "assistant: It is 22:13.",
        "",
        "  Late!",
    ]
    ended = history(tmp_path, "1").stdout.splitlines()[0]
    assert ended.endswith("· ended by /new") and "telegram -100123 (thread 7)" in ended


def test_an_unknown_id_is_one_line(tmp_path):
    make_store(tmp_path / "data" / "state.db", three_chats)
    done = history(tmp_path, "99")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "hermes-gateway: no conversation 99 (hermes-gateway history lists them)\n"


def test_with_nothing_stored_it_says_so_and_creates_nothing(tmp_path):
    done = history(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"no conversations yet ({tmp_path / 'data' / 'state.db'})\n"
    assert not (tmp_path / "data").exists()


def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    state = tmp_path / "data" / "state.db"
    state.parent.mkdir()
    state.write_text("not a database\n" * 100)
    done = history(tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"hermes-gateway: {state}: not an SQLite database (or an encrypted one); "
                           "it was left untouched: move it aside to start afresh\n")


def test_piped_into_head_it_ends_without_a_traceback(tmp_path):
    async def many(store, clock):
        for n in range(1500):
            clock.now += 1
            await store.record_turn(ConversationKey("telegram", str(n)),
                                    [{"role": "user", "content": f"message {n} " + "y" * 80}])
    make_store(tmp_path / "data" / "state.db", many)
    done = history(tmp_path, "-n", "5000", shell_tail="| head -1")
    assert done.stdout == "  ID  LAST ACTIVITY     PLATFORM  CHAT  THREAD  TURNS  FIRST MESSAGE\n"
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored" line
    assert done.returncode == 141  # like any tool whose reader went away (pipefail shows it)


def test_the_list_comes_a_page_at_a_time_and_names_the_next_page(tmp_path, capsys, monkeypatch):
    """In this process (``main`` as the console script calls it): one page on stdout, the hint on stderr."""
    from hermes_gateway._core.cli.main import main

    make_store(tmp_path / "data" / "state.db", three_chats)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("HERMES_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)

    def ids(out: str) -> list[str]:
        return [line.split()[0] for line in out.splitlines()[1:]]

    assert main(["history", "-n", "2"]) == 0
    out, err = capsys.readouterr()
    assert ids(out) == ["3", "2"] and err == "conversations 1-2; more: hermes-gateway history --page 2 --limit 2\n"
    assert main(["history", "--limit", "2", "--page", "2"]) == 0
    out, err = capsys.readouterr()
    assert ids(out) == ["1"] and err == ""  # the last page: no hint
    assert main(["history", "--page", "2"]) == 1  # 50 a page: only one page of three
    out, err = capsys.readouterr()
    assert out == "" and err == "hermes-gateway: no page 2: fewer than 51 conversations are stored\n"
    try:
        main(["history", "--page", "0"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "argument -p/--page: 0 is less than 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:  # rows skipped past a database integer: refused, not a traceback
        main(["history", "--page", "99999999999999999999"])
    assert exited.value.code == 2
    assert "argument -p/--page: 99999999999999999999 is more than 2147483647" in capsys.readouterr().err
