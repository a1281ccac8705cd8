"""Helpers shared by the CLI tests (a module with a unique name, so any subset of the suite imports it)."""

from __future__ import annotations

import os
from pathlib import Path

DEADLINE = 30.0  # seconds: only ever reached when something is broken


def write_config(directory: Path, *, tokens_per_second: float, streaming: bool | None = None) -> Path:
    """A config.yaml for the demo model at a speed the test chooses."""
    lines = ["model:", "  demo:", f"    tokens_per_second: {tokens_per_second}"]
    if streaming is not None:
        lines += ["streaming:", f"  cli: {'true' if streaming else 'false'}"]
    path = directory / "config.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def child_env(home: Path) -> dict[str, str]:
    """A clean environment: our HOME and data directory (history, state.db), no inherited streaming switch."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"), TERM="xterm", LANG="C.UTF-8",
               LC_ALL="C.UTF-8", PYTHONUNBUFFERED="1")
    env.pop("NO_COLOR", None)
    return env
