"""What the chat says about the model and about failures: short, one line, never a secret."""

from hermes_gateway._core.cli.turn import box_label, clip, describe_model, one_line
from hermes_gateway._core.config import parse_config


def test_the_demo_model_says_how_to_get_a_real_one():
    config = parse_config({}, env={})
    assert describe_model(config) == "demo model — set model.base_url in config.yaml for a real one"
    assert box_label(config) == "demo"


def test_a_real_model_is_named_with_its_host_and_never_its_key():
    config = parse_config({"model": {"base_url": "https://api.example.com/v1", "name": "gpt-4o-mini",
                                     "api_key": "sk-very-secret"}}, env={})
    assert describe_model(config) == "gpt-4o-mini at api.example.com"
    assert box_label(config) == "gpt-4o-mini"


def test_errors_become_one_clipped_line():
    assert one_line(ValueError("bad thing\nand a second line")) == "ValueError: bad thing"
    assert one_line(RuntimeError()) == "RuntimeError"
    long = clip("word " * 200)
    assert "\n" not in long and len(long) <= 300 and long.endswith("…")
