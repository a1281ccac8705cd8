"""The README is a newcomer's path: its config example loads, and every link in it and in the guides it points to
(docs/) leads to a file that exists and, with a ``#fragment``, to a heading that file has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hermes_gateway._core.config import parse_config

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: Code (fenced blocks, inline spans): a link written there is an example, not a link.
CODE = re.compile(r"(?ms)^```.*?^```|`[^`\n]*`")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a Markdown page's headings (lower case, punctuation dropped, spaces as hyphens)."""
    found = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_the_readme_config_example_loads_with_what_it_says():
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## A config example", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    config = parse_config(yaml.safe_load(block), source="README",
                          env={"OPENAI_API_KEY": "sk-example", "TELEGRAM_TOKEN": "123:abc"})
    assert (config.model.endpoint.base_url, config.model.endpoint.name) == ("https://api.openai.com/v1", "gpt-4o-mini")
    assert config.streaming.enabled is True
    assert config.platforms["telegram"] == {"enabled": True, "token": "123:abc", "allowed_chats": [123456789]}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_leads_to_a_file_and_heading_that_exist(page):
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, fragment = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(target)
        elif fragment and goal.suffix == ".md" and fragment not in anchors(goal):
            broken.append(target)
    assert broken == []


def test_the_readme_points_to_every_guide():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guides = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert {name for name in guides if f"](docs/{name})" not in readme} == set()
