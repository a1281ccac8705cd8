"""The image's entrypoint and its requirements list, on the host (fast; the container tests run them in the image).

The entrypoint is run as a program, as the image runs it, with ``hermes-gateway`` on PATH being a script that
prints what it was started with: its stderr is what an operator would read.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "deploy" / "container" / "entrypoint.py"
REQUIREMENTS = ROOT / "deploy" / "container" / "requirements.py"


@pytest.fixture
def launch(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "hermes-gateway"
    fake.write_text('#!/bin/sh\necho "started: $* config=$HERMES_CONFIG"\n')
    fake.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir()

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        base = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HERMES_HOME": str(data)}
        return subprocess.run([sys.executable, str(ENTRYPOINT), *args], env={**base, **env}, capture_output=True,
                              text=True, timeout=60)

    run.data = data  # type: ignore[attr-defined]
    return run


def test_with_a_key_it_becomes_the_gateway_with_the_image_config(launch):
    done = launch(HERMES_API_KEY="k")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "started: run config=/etc/hermes-gateway/config.yaml"


def test_the_image_config_without_a_key_is_one_line(launch):
    done = launch()
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("hermes-gateway: set HERMES_API_KEY") and "/config/config.yaml" in line


def test_run_with_options_before_it_still_needs_the_key(launch):
    done = launch("-v", "run")
    assert done.returncode == 2 and "set HERMES_API_KEY" in done.stderr


def test_an_explicit_config_and_other_commands_need_no_key(launch, tmp_path):
    done = launch("run", HERMES_CONFIG=str(tmp_path / "mine.yaml"))
    assert done.stdout.strip() == f"started: run config={tmp_path / 'mine.yaml'}"
    assert launch("doctor").stdout.strip() == "started: doctor config=/etc/hermes-gateway/config.yaml"


def test_an_unwritable_data_folder_is_one_line_saying_how_to_fix_it(launch, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")  # even root cannot create a file inside a file
    done = launch(HERMES_API_KEY="k", HERMES_HOME=str(blocked))
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert f"{blocked} is not writable" in line and "chown -R" in line and ":U" in line and "--userns=keep-id" in line
    assert list(launch.data.iterdir()) == []  # and the probe file is never left behind


def test_wait_for_starts_once_the_port_listens_and_gives_up_in_one_line(launch):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        done = launch(HERMES_API_KEY="k", HERMES_WAIT_FOR=f"127.0.0.1:{port}")
        assert done.returncode == 0 and done.stdout.startswith("started: run"), done.stderr
    # now nothing listens there
    done = launch(HERMES_API_KEY="k", HERMES_WAIT_FOR=f"127.0.0.1:{port}", HERMES_WAIT_SECONDS="0.5")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith(f"hermes-gateway: 127.0.0.1:{port} did not accept a connection "
                                                   "within 0.5 s (HERMES_WAIT_FOR")
    bad = launch(HERMES_API_KEY="k", HERMES_WAIT_FOR="postgres")
    assert bad.returncode == 2 and "host:port" in bad.stderr


def test_requirements_list_the_dependencies_of_the_gateway_its_extras_and_the_plugins(tmp_path):
    def listed(extras: str, plugins: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(REQUIREMENTS), str(ROOT), extras, plugins], capture_output=True,
                              text=True, timeout=60)

    lines = listed("postgres", "telegram slack").stdout.splitlines()
    assert "aiohttp>=3.9" in lines and any(line.startswith("psycopg[binary]") for line in lines)
    assert any(line.startswith("python-telegram-bot") for line in lines)
    assert any(line.startswith("slack-bolt") for line in lines)
    assert not any(line.startswith(("hermes-gateway", "discord")) for line in lines)
    wrong = listed("", "telegarm")
    assert wrong.returncode == 1 and "no plugin 'telegarm'" in wrong.stderr and "telegram" in wrong.stderr
    assert os.access(ENTRYPOINT, os.X_OK)


@pytest.mark.parametrize("path", ["deploy/container/config.yaml", "deploy/config.yaml"])
def test_the_shipped_configs_are_accepted_and_listen_with_a_key(path):
    import yaml

    from hermes_gateway._core.config import parse_config

    env = {"HERMES_API_KEY": "k" * 32, "POSTGRES_PASSWORD": "pw"}
    config = parse_config(yaml.safe_load((ROOT / path).read_text()), source=path, env=env)
    assert config.api_server.host == "0.0.0.0" and config.api_server.api_keys == ("k" * 32,)
    assert config.model.is_demo
    if path == "deploy/config.yaml":
        assert config.store.url == "postgresql://hermes:pw@postgres:5432/hermes"
        assert config.coordination.url == "redis://redis:6379/0"
