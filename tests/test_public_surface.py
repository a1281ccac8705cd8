"""The plugin contract has a boundary: plugins, the guide and the scaffold use only the public surface.

Public: ``hermes_gateway`` (the names in ``__all__``) and ``hermes_gateway.testing``.
Everything else lives in ``hermes_gateway._core`` and may change without notice, so
a shipped plugin, an example or a scaffolded plugin that reaches into it fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import hermes_gateway
from hermes_gateway._core.scaffold import scaffold

ROOT = Path(__file__).parents[1]
PUBLIC_MODULES = re.compile(r"^hermes_gateway(\.testing(\.[a-z_]+)?)?$")
PRIVATE_TEXT = re.compile(r"hermes_gateway\._|hermes_gateway/_")


def imported_modules(source: str) -> list[str]:
    """Every module an ``import`` or ``from ... import`` names, at any depth (lazy imports included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            if node.module == "hermes_gateway":  # `from hermes_gateway import x`: x must be public
                found += [f"hermes_gateway:{alias.name}" for alias in node.names]
    return found


def violations(source: str) -> list[str]:
    bad = []
    for module in imported_modules(source):
        if module.startswith("hermes_gateway:"):
            name = module.split(":", 1)[1]
            if name not in hermes_gateway.__all__ and name != "testing":
                bad.append(f"from hermes_gateway import {name} (not in __all__)")
        elif module.startswith("hermes_gateway") and not PUBLIC_MODULES.match(module):
            bad.append(f"import {module}")
        elif module.startswith("hermes_gateway.testing.") and module.split(".")[2].startswith("_"):
            bad.append(f"import {module}")
    bad += [f"mentions {m.group(0)}..." for m in PRIVATE_TEXT.finditer(source)]
    return bad


def plugin_files() -> list[Path]:
    return sorted(p for p in (ROOT / "plugins").rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", plugin_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shipped_plugin_file_uses_only_the_public_surface(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8")) == []


def test_every_python_example_of_the_plugin_guide_uses_only_the_public_surface() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert len(blocks) >= 6
    for block in blocks:
        assert violations(block) == [], block[:200]


def test_the_scaffolded_plugin_uses_only_the_public_surface(tmp_path: Path) -> None:
    target = scaffold("acmechat", tmp_path)
    for path in target.rglob("*.py"):
        assert violations(path.read_text(encoding="utf-8")) == [], path


def test_the_checker_catches_what_it_should() -> None:
    """A test that cannot fail is no test: the checker refuses each way of reaching past the boundary."""
    assert violations("from hermes_gateway._core.delivery import Delivery")
    assert violations("import hermes_gateway._core.gateway as g")
    assert violations("def f():\n    from hermes_gateway._core.secrets import scrub\n")
    assert violations("from hermes_gateway import make_plugins, _core")
    assert violations("x = make_plugins(builtins=('hermes_gateway._core.builtin.tools',))")
    assert violations("from hermes_gateway import RateBudget, Stream, utf16_length") == []
    assert violations("from hermes_gateway.testing.conformance import Harness") == []


def test_everything_but_the_public_surface_is_private_by_name() -> None:
    package = ROOT / "hermes_gateway"
    public = sorted(p.name for p in package.iterdir() if not p.name.startswith(("_", ".")) and p.name != "py.typed")
    assert public == ["testing"], public
    assert {p.name for p in package.iterdir() if p.suffix == ".py"} <= {"__init__.py", "__main__.py"}


@pytest.mark.parametrize("name", hermes_gateway.__all__)
def test_every_public_name_is_importable_and_documented(name: str) -> None:
    value = getattr(hermes_gateway, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert (value.__doc__ or "").strip(), f"hermes_gateway.{name} has no docstring"


@pytest.mark.parametrize("name", importlib.import_module("hermes_gateway.testing").__all__)
def test_every_name_of_the_kit_is_importable_and_documented(name: str) -> None:
    value = getattr(importlib.import_module("hermes_gateway.testing"), name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert (value.__doc__ or "").strip(), f"hermes_gateway.testing.{name} has no docstring"
