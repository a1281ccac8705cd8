"""The terminal chat on the conversation store: it continues across runs, /new starts over, -m stays stateless."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import time

from cli_helpers import DEADLINE, child_env, terminal_rows
from hermes_gateway._core.cli.moment import when
from hermes_gateway._core.store import SQLiteStore

CONTINUING = "continuing the conversation from"


def nonblank(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if line.strip()]


def at_prompt(screen: str) -> bool:
    lines = nonblank(screen)
    return bool(lines) and lines[-1].strip() == "›"


def last_reply(screen: str) -> list[str] | None:
    """The body of the newest finished reply box."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.startswith("╭─")]
    if not tops:
        return None
    body = []
    for line in lines[tops[-1] + 1:]:
        if line.startswith("╰"):
            return [b.strip("│ ").strip() for b in body]
        body.append(line)
    return None


def upstream_config(tmp_path, upstream):
    path = tmp_path / "http.yaml"
    path.write_text(f"model:\n  base_url: {upstream.base_url}\n  name: demo\n  api_key: test-key\n"
                    "streaming:\n  cli: true\n", encoding="utf-8")
    return path


class Chat:
    """One run of the interactive chat against the recorded upstream."""

    def __init__(self, terminal, config, upstream, *extra):
        self.upstream = upstream
        self.term = terminal("chat", "--config", str(config), *extra)
        self.opening = self.term.wait_for(at_prompt)

    def ask(self, message: str, reply: str) -> list[tuple[str, str]]:
        """Send ``message``, wait for ``reply``; the (role, content) pairs the model was sent."""
        count = len(self.upstream.requests)
        self.term.enter(message)
        self.term.wait_for(lambda s: last_reply(s) == [reply] and at_prompt(s))
        assert len(self.upstream.requests) == count + 1
        return [(m["role"], m["content"]) for m in self.upstream.requests[-1]["body"]["messages"]]

    def leave(self) -> None:
        self.term.ctrl("d")
        assert self.term.wait_exit() == 0


def stored(tmp_path) -> list:
    async def read():
        store = SQLiteStore(tmp_path / "home" / ".hermes" / "state.db")
        try:
            return [(c.platform, c.chat_id, c.turns, c.current) for c in await store.list_conversations()]
        finally:
            await store.close()
    return asyncio.run(read())


def test_the_chat_continues_its_last_conversation_and_new_starts_over(terminal, tmp_path, demo_upstream):
    upstream = demo_upstream(tokens_per_second=0)
    config = upstream_config(tmp_path, upstream)
    first = Chat(terminal, config, upstream)
    assert CONTINUING not in first.opening  # nothing to continue yet
    asked = time.time()
    assert first.ask("echo: my name is Ada", "my name is Ada") == [("user", "echo: my name is Ada")]
    first.leave()

    second = Chat(terminal, config, upstream)
    line = next(line for line in nonblank(second.opening) if CONTINUING in line)
    # the conversation was saved between `asked` and now: a minute may have turned meanwhile (it did, under load)
    shown = {f"{CONTINUING} {when(moment)} (2 messages) — /new starts over"
             for moment in range(int(asked), int(time.time()) + 1)}
    assert line.strip() in shown
    assert second.ask("echo: who am I?", "who am I?") == [
        ("user", "echo: my name is Ada"), ("assistant", "my name is Ada"), ("user", "echo: who am I?")]
    second.term.enter("/new")
    second.term.wait_for("new conversation")
    assert second.ask("echo: fresh", "fresh") == [("user", "echo: fresh")]
    second.leave()

    third = Chat(terminal, config, upstream)
    assert "(2 messages)" in next(line for line in nonblank(third.opening) if CONTINUING in line)
    assert third.ask("echo: again", "again") == [("user", "echo: fresh"), ("assistant", "fresh"),
                                                 ("user", "echo: again")]
    third.leave()
    assert stored(tmp_path) == [("cli", "local", 2, True), ("cli", "local", 2, False)]


def test_no_history_neither_continues_nor_saves(terminal, tmp_path, demo_upstream):
    upstream = demo_upstream(tokens_per_second=0)
    config = upstream_config(tmp_path, upstream)
    chat = Chat(terminal, config, upstream)
    chat.ask("echo: saved", "saved")
    chat.leave()
    private = Chat(terminal, config, upstream, "--no-history")
    assert CONTINUING not in private.opening
    assert private.ask("echo: private", "private") == [("user", "echo: private")]
    private.leave()
    assert stored(tmp_path) == [("cli", "local", 1, True)]


def test_one_shot_messages_neither_read_nor_write_the_conversation(terminal, tmp_path, demo_upstream):
    upstream = demo_upstream(tokens_per_second=0)
    config = upstream_config(tmp_path, upstream)
    chat = Chat(terminal, config, upstream)
    chat.ask("echo: remembered", "remembered")
    chat.leave()
    for how in (["-m", "echo: scripted"], []):
        done = subprocess.run([sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config), *how],
                              input="echo: scripted\n", capture_output=True, text=True,
                              env=child_env(tmp_path / "home"), cwd=tmp_path, timeout=DEADLINE)
        assert done.returncode == 0 and done.stdout == "scripted\n", done.stderr
        assert [m["role"] for m in upstream.requests[-1]["body"]["messages"]] == ["user"]
    assert stored(tmp_path) == [("cli", "local", 1, True)]


def test_a_database_that_cannot_be_used_is_one_line_and_left_untouched(terminal, tmp_path):
    state = tmp_path / "home" / ".hermes" / "state.db"
    state.parent.mkdir(parents=True)
    state.write_bytes(b"my own notes, not a database\n" * 100)
    before = hashlib.sha256(state.read_bytes()).hexdigest()
    term = terminal("chat")
    term.wait_output_end()
    # one line (wrapped by the 100-column terminal, maybe right at a space), nothing else: no banner, no traceback
    assert nonblank(term.text()) == terminal_rows(f"hermes-gateway: {state}: not an SQLite database (or an encrypted "
                                                  "one); it was left untouched: move it aside to start afresh")
    assert term.wait_exit() == 1
    assert hashlib.sha256(state.read_bytes()).hexdigest() == before


def test_when_says_today_yesterday_or_the_date():
    now = time.mktime((2026, 11, 30, 15, 0, 0, 0, 0, -1))
    assert when(time.mktime((2026, 11, 30, 9, 5, 0, 0, 0, -1)), now) == "today at 09:05"
    assert when(time.mktime((2026, 11, 29, 23, 59, 0, 0, 0, -1)), now) == "yesterday at 23:59"
    assert when(time.mktime((2026, 10, 2, 18, 40, 0, 0, 0, -1)), now) == "2026-10-02 at 18:40"

