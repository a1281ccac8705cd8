"""``hooks:`` of config.yaml: one line naming file, key and expectation; the secret from the environment, masked."""

from __future__ import annotations

import json
from typing import Any

import pytest

SECRET = "hook-secret-4f9a1c2e7b"


def hook(name: str = "ci", verify: str = "github", prompt: str = "echo: {json.msg}", **more: Any) -> dict[str, Any]:
    return {"name": name, "secret": SECRET, "verify": verify, "chat": "reference:ops", "prompt": prompt, **more}


def test_bad_hook_entries_are_one_line_naming_the_key():
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.errors import ConfigError

    cases = [
        ([{**hook(), "verfy": "github"}], "hooks[0].verfy", "did you mean verify?"),
        ([hook(verify="md5")], "hooks[0].verify", "github, hmac-sha256, bearer"),
        ([{**hook(), "secret": ""}], "hooks[0].secret", "non-empty"),
        ([hook(chat="ops")], "hooks[0].chat", "PLATFORM:CHAT"),
        ([hook(name="a/b")], "hooks[0].name", "letters"),
        ([hook(), hook()], "hooks[1].name", "twice"),
        ([hook(max_bytes=0)], "hooks[0].max_bytes", "from 1 to"),
        ({"name": "ci"}, "hooks", "a list"),
    ]
    for hooks, key, expected in cases:
        with pytest.raises(ConfigError) as caught:
            parse_config({"hooks": hooks}, source="config.yaml", env={})
        line = str(caught.value)
        assert "\n" not in line and "config.yaml" in line and key in line and expected in line, line


def test_the_secret_comes_from_the_environment_and_is_masked_in_config_output():
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.config_view import effective

    config = parse_config({"hooks": [{**hook(), "secret": "${HOOK_SECRET}"}]}, source="config.yaml",
                          env={"HOOK_SECRET": SECRET})
    assert config.hooks[0].secret == SECRET
    shown = effective(config)
    assert shown["hooks"][0]["secret"] == "***" and SECRET not in json.dumps(shown)
    assert SECRET not in repr(config.hooks[0])
