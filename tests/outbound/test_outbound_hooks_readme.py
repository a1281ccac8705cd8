"""The guide's (docs/outbound.md) "Hooks from outside" example is a config that loads, with the defaults its comments state."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.settings.hooks import DEFAULT_MAX_BYTES, HookSettings

README = Path(__file__).resolve().parents[2] / "docs" / "outbound.md"


def test_the_readme_example_loads():
    section = README.read_text(encoding="utf-8").split("## Hooks from outside", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)
    env = {"GITHUB_WEBHOOK_SECRET": "gh-secret-1", "GRAFANA_HOOK_TOKEN": "graf-token-1"}
    ci, grafana = parse_config(yaml.safe_load(block), source="README", env=env).hooks
    assert (ci.name, ci.verify, ci.secret, ci.platform, ci.chat) == \
        ("ci", "github", "gh-secret-1", "telegram", "-1001234567890")
    assert ci.needs_json and (ci.max_bytes, ci.per_minute, ci.burst) == (DEFAULT_MAX_BYTES, 60, 10)
    defaults = HookSettings("x", "bearer", "p", "c", "prompt")
    assert (defaults.max_bytes, defaults.per_minute, defaults.burst) == (262144, 60, 10)
    assert (grafana.verify, grafana.platform, grafana.chat, grafana.needs_json) == ("bearer", "slack", "C024BE91L",
                                                                                  False)
