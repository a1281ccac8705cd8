"""``telemetry:``: off by default; an endpoint, a service name, a sample ratio; mistakes are one line naming the key."""

from __future__ import annotations

import sys

import pytest

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.config_view import effective
from hermes_gateway._core.errors import ConfigError


def test_telemetry_is_off_by_default():
    telemetry = parse_config({}, source="c.yaml").telemetry
    assert (telemetry.enabled, telemetry.otlp_endpoint, telemetry.service_name, telemetry.sample_ratio) == \
        (False, None, "hermes-gateway", 1.0)


@pytest.mark.parametrize("written, posted_to", [
    ("http://collector:4318", "http://collector:4318/v1/traces"),  # a collector's base URL
    ("http://collector:4318/", "http://collector:4318/v1/traces"),
    ("https://otlp.example/otlp/v1/traces", "https://otlp.example/otlp/v1/traces"),  # the full traces URL
])
def test_the_endpoint_is_where_spans_are_posted(written, posted_to):
    telemetry = parse_config({"telemetry": {"otlp_endpoint": written, "service_name": " bot ", "sample_ratio": 0.25}},
                             source="c.yaml").telemetry
    assert (telemetry.otlp_endpoint, telemetry.service_name, telemetry.sample_ratio) == (posted_to, "bot", 0.25)


@pytest.mark.parametrize("section, key, expected", [
    ({"sample_ratio": 1.5}, "telemetry.sample_ratio", "1"),
    ({"sample_ratio": "all"}, "telemetry.sample_ratio", "a number"),
    ({"otlp_endpoint": "collector:4318"}, "telemetry.otlp_endpoint", "an http:// or https:// URL"),
    ({"service_name": " "}, "telemetry.service_name", "a non-empty name"),
    ({"endpoint": "http://c:4318"}, "telemetry.endpoint", "unknown key; expected one of otlp_endpoint"),
])
def test_a_bad_telemetry_value_is_one_line(section, key, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config({"telemetry": section}, source="c.yaml")
    text = str(caught.value)
    assert "\n" not in text and "c.yaml" in text and key in text and expected in text, text


def test_an_endpoint_without_the_packages_is_refused_in_one_line_naming_the_extra(monkeypatch):
    for name in [n for n in sys.modules if n == "opentelemetry" or n.startswith("opentelemetry.")] + ["opentelemetry"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: no import of it can succeed
    assert parse_config({"telemetry": {"sample_ratio": 0.5}}, source="c.yaml").telemetry.enabled is False
    with pytest.raises(ConfigError) as caught:
        parse_config({"telemetry": {"otlp_endpoint": "http://collector:4318"}}, source="c.yaml")
    assert str(caught.value) == ("c.yaml: telemetry.otlp_endpoint: the OpenTelemetry packages, which are not "
                                 "installed (no module opentelemetry.sdk.trace): "
                                 "pip install 'hermes-gateway[telemetry]'")


def test_credentials_in_the_endpoint_are_masked_in_the_config_output():
    config = parse_config({"telemetry": {"otlp_endpoint": "https://user:s3cr3t-pass@otlp.example"}}, source="c.yaml")
    shown = effective(config)["telemetry"]
    assert shown["otlp_endpoint"] == "https://***@otlp.example/v1/traces" and "s3cr3t" not in repr(shown)
