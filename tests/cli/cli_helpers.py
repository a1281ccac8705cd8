"""Helpers shared by the CLI tests (a module with a unique name, so any subset of the suite imports it)."""

from __future__ import annotations

import os
from pathlib import Path

from wcwidth import wcwidth

DEADLINE = 30.0  # seconds: only ever reached when something is broken
ROWS, COLS = 40, 100  # the terminal the chat is drawn on


def write_config(directory: Path, *, tokens_per_second: float, streaming: bool | None = None) -> Path:
    """A config.yaml for the demo model at a speed the test chooses."""
    lines = ["model:", "  demo:", f"    tokens_per_second: {tokens_per_second}"]
    if streaming is not None:
        lines += ["streaming:", f"  cli: {'true' if streaming else 'false'}"]
    path = directory / "config.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def child_env(home: Path) -> dict[str, str]:
    """A clean environment: our HOME and data directory (history, state.db), no inherited streaming switch.

    ``HERMES_LOAD_PLUGINS`` is kept: the command loads the plugins the test loads (none, unless it asked).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_") or k == "HERMES_LOAD_PLUGINS"}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"), TERM="xterm", LANG="C.UTF-8",
               LC_ALL="C.UTF-8", PYTHONUNBUFFERED="1")
    env.pop("NO_COLOR", None)
    return env


def terminal_rows(text: str, cols: int = COLS) -> list[str]:
    """``text`` as the test terminal shows it: cut every ``cols`` cells (a wide character takes two) wherever
    that falls, even on a space, and each row read back without its trailing blanks, as the screen reads.

    Compare screen rows with this, never the rows joined: a row break on a space loses that space.
    """
    rows, row, width = [], "", 0
    for char in text:
        cells = max(wcwidth(char), 0)
        if width + cells > cols:
            rows.append(row.rstrip())
            row, width = "", 0
        row, width = row + char, width + cells
    return [*rows, row.rstrip()]
