"""``tools.approval`` and ``api_server.approvals`` in the config: what they match, how they are refused."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway._core.approval_policy import ApprovalPolicy
from hermes_gateway._core.config import parse_config


def test_names_and_globs_match_tool_names():
    policy = ApprovalPolicy(require=("shell_*", "files__delete"))
    assert policy.needs("shell_run") and policy.needs("files__delete")
    assert not policy.needs("qr_code") and not policy.needs("files__read")
    assert not ApprovalPolicy().needs("shell_run")  # the default requires nothing


def test_the_section_is_read_with_defaults():
    config = parse_config({"tools": {"approval": {"require": ["shell_*"], "who": "admin", "timeout": 30}},
                           "api_server": {"approvals": "allow"}}, env={})
    assert config.tools.approval == ApprovalPolicy(require=("shell_*",), timeout=30, who="admin")
    assert config.api_server.approvals == "allow"
    assert parse_config({}, env={}).api_server.approvals == "deny"


@pytest.mark.parametrize("section, key", [
    ({"tools": {"approval": {"who": "anyone"}}}, "tools.approval.who"),
    ({"tools": {"approval": {"timeout": 0}}}, "tools.approval.timeout"),
    ({"tools": {"approval": {"require": [""]}}}, "tools.approval.require[0]"),
    ({"tools": {"aproval": {}}}, "tools.aproval"),
    ({"api_server": {"approvals": "ask"}}, "api_server.approvals"),
])
def test_a_bad_value_is_one_line_naming_the_key(section, key):
    with pytest.raises(ConfigError) as caught:
        parse_config(section, source="config.yaml", env={})
    assert f"config.yaml: {key}" in str(caught.value) and "\n" not in str(caught.value)


def test_approval_sits_beside_tools_reminders_in_one_tools_section():
    config = parse_config({"tools": {"approval": {"require": ["shell_*"]}, "reminders": True}}, env={})
    assert config.tools.approval.require == ("shell_*",) and config.outbound.reminders.enabled
