"""The core's layers point down only: the import contracts in ``pyproject.toml``, run by import-linter.

import-linter builds the graph of every import that executes, at module
level or inside a function (a lazy import is caught like any other), and
checks it against the contracts: the layers of ``hermes_gateway._core``, no
test kit in production code, no plugin loading from the agent.
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hermes_gateway._core

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(project: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` in ``project`` (it reads the contracts from the pyproject.toml there), no cache written."""
    env = {**os.environ}
    if pythonpath is not None:  # the copy there is found before the installed package
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache"], cwd=project, env=env, capture_output=True,
                          text=True, timeout=300)


def layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    return [[name.strip() for name in re.split(r"[|:]", layer)] for layer in contract["layers"]]


def test_the_import_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_every_part_of_the_core_has_its_layer_and_only_one():
    parts = sorted(info.name for info in pkgutil.iter_modules(hermes_gateway._core.__path__))
    placed = [name for layer in layers() for name in layer]
    assert sorted(placed) == parts, "each module or package of hermes_gateway._core belongs in one layer"


@pytest.fixture
def copy_of_the_project(tmp_path: Path) -> Path:
    """The package and its contracts, copied: a test may add an import to the copy."""
    shutil.copytree(ROOT / "hermes_gateway", tmp_path / "hermes_gateway",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_lines(module: Path, text: str) -> None:
    module.write_text(module.read_text(encoding="utf-8") + "\n\n" + text + "\n", encoding="utf-8")


def test_an_upward_import_inside_a_function_breaks_the_layers(copy_of_the_project: Path):
    store = copy_of_the_project / "hermes_gateway" / "_core" / "store" / "base.py"
    add_lines(store, "def _gateway_class():\n    from ..gateway import Gateway  # lazy, and upward\n    return Gateway")
    result = lint_imports(copy_of_the_project, pythonpath=copy_of_the_project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "The core's layers point down only BROKEN" in result.stdout
    assert "hermes_gateway._core.store.base -> hermes_gateway._core.gateway" in result.stdout


def test_production_code_importing_the_kit_or_the_agent_loading_plugins_is_refused(copy_of_the_project: Path):
    core = copy_of_the_project / "hermes_gateway" / "_core"
    add_lines(core / "delivery" / "core.py", "def _kit():\n    import hermes_gateway.testing\n")
    add_lines(core / "agent" / "core.py", "def _plugins():\n    from ..plugins import installed_plugins\n")
    result = lint_imports(copy_of_the_project, pythonpath=copy_of_the_project)
    assert result.returncode == 1
    assert "Production code never imports the test kit BROKEN" in result.stdout
    assert "hermes_gateway._core.delivery.core -> hermes_gateway.testing" in result.stdout
    assert "The agent never loads plugins" in result.stdout and "hermes_gateway._core.agent.core -> " \
           "hermes_gateway._core.plugins" in result.stdout
