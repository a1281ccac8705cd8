"""The guide's (docs/tools.md) "Tools" example is a config that loads, with what the text says it has."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hermes_gateway._core.config import parse_config

README = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_the_readme_tools_example_loads():
    section = README.read_text(encoding="utf-8").split("# Tools\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    config = parse_config(yaml.safe_load(block), source="README", env={"FILES_TOKEN": "t" * 12, "SEARCH_KEY": "k" * 12})
    files, search, later = config.mcp_servers
    assert (files.transport, files.timeout, files.offers("read_file"), files.offers("read_secrets")) == \
        ("stdio", 30.0, True, False)
    assert search.transport == "http" and search.headers["Authorization"] == "Bearer " + "k" * 12
    assert later.enabled is False
