"""``hermes-gateway new-plugin NAME``: a platform plugin distribution that installs, passes its tests and runs.

The templates under ``template/`` are ordinary files with ``{{name}}``,
``{{Name}}`` and ``{{NAME}}`` in them (and ``NAME`` in paths); they end in
``.tmpl`` so that nothing imports, lints or collects them where they lie.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from ..errors import HermesError

#: A platform name: what config.yaml, the entry point and the package name are built from.
NAME_SHAPE = re.compile(r"^[a-z][a-z0-9_]{1,30}$")


class ScaffoldError(HermesError, ValueError):
    """The name or the folder cannot be used; one line."""


def class_name(name: str) -> str:
    """``acme_chat`` → ``AcmeChat``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def render(text: str, name: str) -> str:
    return (text.replace("{{NAME}}", name.upper()).replace("{{Name}}", class_name(name))
            .replace("{{name}}", name))


def scaffold(name: str, parent: Path, *, into: bool = False) -> Path:
    """Write the distribution ``parent/name`` (``into=True``: into ``parent`` itself, the folder the author
    chose); returns its folder. Refuses a bad name or a non-empty folder."""
    if not NAME_SHAPE.match(name):
        raise ScaffoldError(f"{name!r} is not a platform name: 2 to 31 characters a-z, 0-9 or _, "
                            f"starting with a letter (e.g. acmechat)")
    target = parent if into else parent / name
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"{target} already exists and is not empty; choose another --dir or name")
    template = resources.files(__package__) / "template"
    written = []
    for source, relative in _walk(template, ""):
        path = target / render(relative, name).replace("NAME", name).removesuffix(".tmpl")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(source.read_text(encoding="utf-8"), name), encoding="utf-8")
        written.append(path)
    return target


def _walk(folder: "resources.abc.Traversable", prefix: str) -> list[tuple["resources.abc.Traversable", str]]:
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        relative = f"{prefix}{entry.name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                found += _walk(entry, relative + "/")
        elif entry.name.endswith(".tmpl"):
            found.append((entry, relative))
    return found
