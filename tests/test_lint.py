"""ruff and mypy over the core and the four plugins, as configured in ``pyproject.toml``.

Collected always, run only with ``HERMES_LINT=1``: the code base does not
pass them yet (the findings are fixed after the Plugin SDK v2 work lands;
then the switch goes on in ``.ci/run``). The public surface
(``hermes_gateway`` and ``hermes_gateway.testing``) is type-checked
strictly, the rest leniently.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(os.environ.get("HERMES_LINT") != "1",
                                reason="lint and type checks run with HERMES_LINT=1")

#: What ruff checks (mypy's files are listed in pyproject.toml).
LINTED = ["hermes_gateway", "plugins", "tests", "bench", "conftest.py"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_finds_nothing():
    result = run("ruff", "check", "--no-cache", "--output-format", "concise", *LINTED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing():
    result = run("mypy", "--no-incremental", "--cache-dir", os.devnull)
    assert result.returncode == 0, result.stdout + result.stderr
