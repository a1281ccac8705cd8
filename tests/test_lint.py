"""ruff and mypy over the core and the four plugins, as configured in ``pyproject.toml``.

They run with the rest of the suite, so the README's test command (and CI's
``.ci/run``, which runs it) fails on a lint finding or a type error. ruff
looks for bugs, not taste (``[tool.ruff.lint]``). mypy checks the public
surface (``hermes_gateway`` and ``hermes_gateway.testing``) strictly, the rest
leniently (``[tool.mypy]``). Each is skipped, with the reason, only where it
is not installed (the ``test`` extra installs both). mypy's cache lives in
``.mypy_cache`` at the root of the checkout (git ignores it): the first run
is cold (half a minute of CPU), later ones check only what changed. The mypy
test is marked ``long``: it starts first and, under pytest-xdist, runs beside
the rest of the suite rather than alone at its end.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: What ruff checks (mypy's files are listed in pyproject.toml).
LINTED = ["hermes_gateway", "plugins", "tests", "bench", "deploy", "conftest.py"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")


def test_ruff_finds_nothing() -> None:
    needs("ruff")
    result = run("ruff", "check", "--no-cache", "--output-format", "concise", *LINTED)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.long
@pytest.mark.timeout(900)  # cold (a fresh clone) on a loaded machine mypy takes minutes; run() allows 900 s
def test_mypy_finds_nothing() -> None:
    needs("mypy")
    result = run("mypy", "--cache-dir", str(ROOT / ".mypy_cache"))
    assert result.returncode == 0, result.stdout + result.stderr
