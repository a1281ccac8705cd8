"""Which replies stream in the terminal: --stream/--no-stream, then DESIGN.md's config precedence."""

import pytest

from hermes_gateway._core.cli.chat import streaming_enabled
from hermes_gateway._core.cli.main import build_parser
from hermes_gateway._core.config import parse_config


def decide(data, env=None, argv=()):
    args = build_parser().parse_args(["chat", *argv])
    return streaming_enabled(parse_config(data, env=env or {}), args.stream)


def test_off_by_default():
    assert decide({}) is False


def test_the_master_switch_turns_it_on():
    assert decide({"streaming": {"enabled": True}}) is True


def test_the_environment_replaces_the_master_switch():
    assert decide({"streaming": {"enabled": False}}, env={"HERMES_STREAMING_ENABLED": "true"}) is True


def test_the_cli_key_wins_over_the_master_switch_and_the_environment():
    assert decide({"streaming": {"enabled": True, "cli": False}}, env={"HERMES_STREAMING_ENABLED": "1"}) is False
    assert decide({"streaming": {"cli": {"enabled": True}}}) is True


@pytest.mark.parametrize("flag, expected", [("--stream", True), ("--no-stream", False)])
def test_the_command_line_flag_wins_over_everything(flag, expected):
    assert decide({"streaming": {"cli": not expected}}, argv=[flag]) is expected


def test_stream_and_no_stream_cannot_be_combined(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["chat", "--stream", "--no-stream"])
    assert "not allowed with" in capsys.readouterr().err
