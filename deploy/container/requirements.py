"""Print the requirements of the gateway (with EXTRAS) and of the chosen plugins, one a line, for ``pip install -r``.

Why: the Containerfile installs these in a layer of their own, before the sources are copied, so a change to the
gateway's code rebuilds in seconds (only ``pip install --no-deps`` of the project runs again) instead of reinstalling
every dependency. The gateway itself (a plugin's ``hermes-gateway>=...``) is left out: it is installed from /src.

    python3 requirements.py SRC "EXTRAS" "PLUGINS"
"""

import re
import sys
import tomllib
from pathlib import Path

OWN = {"hermes-gateway", "hermes_gateway"}


def requirement_name(line: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements(src: Path, extras: list[str], plugins: list[str]) -> list[str]:
    project = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            sys.exit(f"EXTRAS: no extra {extra!r} in pyproject.toml (there are: {', '.join(optional)})")
        found += optional[extra]
    for plugin in plugins:
        path = src / "plugins" / plugin / "pyproject.toml"
        if not path.is_file():
            there = " ".join(sorted(p.parent.name for p in (src / "plugins").glob("*/pyproject.toml")))
            sys.exit(f"PLUGINS: no plugin {plugin!r} in plugins/ (there are: {there})")
        found += tomllib.loads(path.read_text(encoding="utf-8"))["project"].get("dependencies", [])
    return [line for line in dict.fromkeys(found) if requirement_name(line) not in OWN]


if __name__ == "__main__":
    src, extras, plugins = Path(sys.argv[1]), sys.argv[2].replace(",", " ").split(), sys.argv[3].split()
    print("\n".join(requirements(src, extras, plugins)))
