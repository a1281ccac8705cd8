"""docs/deploy.md says only what the code accepts: every config block parses, every command line parses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hermes_gateway._core.cli.main import build_parser
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.config_check import check_names
from hermes_gateway._core.plugins import installed_plugins

PAGE = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"
#: Values for the page's ${NAME}s, shaped like the real thing (a Telegram token is checked for its shape).
ENV = {"OPENAI_API_KEY": "sk-test", "TELEGRAM_TOKEN": "123456:ABCDEFGHIJKLMNOP", "PGPASSWORD": "pw",
       "TELEGRAM_WEBHOOK_SECRET": "s3cret", "HERMES_PORT": "8701"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def gateway_configs() -> list[str]:
    return [b for b in blocks("yaml") if b.startswith("# /etc/hermes-gateway/config.yaml")]


def test_the_page_has_both_configs_and_every_yaml_block_is_yaml():
    assert len(gateway_configs()) == 2, "the single-process and the replicated config"
    for block in blocks("yaml"):
        yaml.safe_load(block)


@pytest.mark.parametrize("index", [0, 1])
def test_each_config_block_is_accepted_by_the_gateway_and_its_plugins(index, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "telegram")  # the page deploys Telegram: its plugin checks its part
    block = gateway_configs()[index]
    data = yaml.safe_load(block)
    config = parse_config(data, source="deploy.md", env=ENV)
    plugins = installed_plugins()
    assert check_names(config, plugins) == []
    if "telegram" in config.platforms:
        from hermes_gateway._core.platform_settings import parse_settings

        settings_type = plugins.platform("telegram").platform.settings
        settings = parse_settings(settings_type, config.platforms["telegram"], platform="telegram", source="deploy.md")
        if index == 1:
            assert settings.webhook, "replicas take webhooks: Telegram allows one poller per bot"
            assert settings.webhook_url.endswith("/webhooks/telegram")
    if index == 1:
        assert config.api_server.port == 8701 and not config.api_server.enabled


def test_every_command_line_on_the_page_parses():
    parser = build_parser()
    lines = [line for block in blocks("sh") for line in block.splitlines()]
    lines += [line.partition("=")[2] for block in blocks("ini") for line in block.splitlines()
              if line.startswith("ExecStart=")]
    lines += [f"{found} FILE" for found in re.findall(r"`(hermes-gateway -v run --config) \.\.\.`",
                                                      PAGE.read_text(encoding="utf-8"))]
    commands = [found.split() for line in lines
                for found in re.findall(r"(?:^|bin/)hermes-gateway((?: +[-\w./]+)*)", line.split(" #")[0])]
    assert len(commands) == 5, commands  # plugins, config, service install, run (the unit), -v run
    for argv in commands:
        args = parser.parse_args(argv)  # an unknown command or option exits (SystemExit) here
        assert args._run is not None, argv


def test_the_prometheus_block_scrapes_metrics_of_each_replica():
    [prometheus] = [yaml.safe_load(b) for b in blocks("yaml") if "scrape_configs" in b]
    [job] = prometheus["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    targets = job["static_configs"][0]["targets"]
    assert len(targets) > 1 and all(re.fullmatch(r"[\w.]+:\d+", t) for t in targets)


def test_the_pages_unit_is_the_one_service_install_writes():
    from hermes_gateway._core.cli.service_units import Installation, system_unit

    [unit] = [b for b in blocks("ini") if b.startswith("[Unit]")]
    installed = Installation(executable=Path("/opt/hermes-gateway/venv/bin/hermes-gateway"),
                             config=Path("/etc/hermes-gateway/config.yaml"), workdir=Path("/"), data=Path("/"))
    assert unit == system_unit(installed)
