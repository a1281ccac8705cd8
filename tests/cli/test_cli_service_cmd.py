"""``hermes-gateway service install|uninstall``: the unit written for this installation and the service manager's calls.

systemd and launchd cannot run here, so ``systemctl``/``launchctl`` are scripts in tmp_path that record their argv
(and may fail as the real one would); ``--root`` stands for / (its ``run/systemd/system`` says systemd runs).
"""

from __future__ import annotations

import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_gateway._core.cli.main import main

EXE = Path(sys.executable).parent / "hermes-gateway"


def word(path: Path) -> str:
    """A path as one word of a unit's command line, as systemd reads it: in double quotes when it has a space
    (a clone in a folder with spaces: CI's own path has them), ``%`` doubled."""
    text = str(path).replace("%", "%%")
    return f'"{text}"' if " " in text else text


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A root with systemd running, a PATH whose systemctl/launchctl record their calls, a config, a home."""
    root = tmp_path / "root"
    (root / "run/systemd/system").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for tool in ("systemctl", "launchctl"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n'
                          'if [ -n "$FAIL_WITH" ]; then echo "$FAIL_WITH" >&2; exit 1; fi\n')
        script.chmod(0o755)
    config = tmp_path / "etc" / "config.yaml"
    config.parent.mkdir()
    config.write_text("model:\n  name: demo\n")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("HERMES_CONFIG", raising=False)
    monkeypatch.delenv("FAIL_WITH", raising=False)
    monkeypatch.chdir(tmp_path)

    class Machine:
        def __init__(self) -> None:
            self.root, self.config, self.home, self.tmp = root, config, home, tmp_path

        def calls(self) -> list[str]:
            return calls.read_text().splitlines() if calls.exists() else []

    return Machine()


def test_install_writes_the_system_unit_for_this_installation_and_enables_it(machine, capsys):
    assert main(["service", "install", "--config", str(machine.config), "--root", str(machine.root)]) == 0
    unit = (machine.root / "etc/systemd/system/hermes-gateway.service").read_text()
    assert f"\nExecStart={word(EXE)} run --config {word(machine.config)}\n" in unit
    assert f"\nEnvironmentFile=-{machine.config.parent / 'env'}\n" in unit
    assert "\nEnvironment=HERMES_HOME=/var/lib/hermes-gateway\nWorkingDirectory=/var/lib/hermes-gateway\n" in unit
    assert "\nDynamicUser=yes\n" in unit and "\nRestartPreventExitStatus=2\n" in unit
    assert unit.endswith("[Install]\nWantedBy=multi-user.target\n")
    assert machine.calls() == ["systemctl daemon-reload", "systemctl enable --now hermes-gateway"]
    out = capsys.readouterr().out
    assert "logs: journalctl -u hermes-gateway -f" in out

    assert main(["service", "uninstall", "--root", str(machine.root)]) == 0
    assert not (machine.root / "etc/systemd/system/hermes-gateway.service").exists()
    assert machine.calls()[2:] == ["systemctl disable --now hermes-gateway", "systemctl daemon-reload"]


def test_install_user_writes_a_user_unit_with_this_directory_and_data(machine, capsys):
    assert main(["service", "install", "--user", "--config", str(machine.config), "--root", str(machine.root)]) == 0
    unit = (machine.home / ".config/systemd/user/hermes-gateway.service").read_text()
    assert f"\nExecStart={word(EXE)} run --config {word(machine.config)}\n" in unit
    assert f"\nEnvironment=HERMES_HOME={machine.tmp / 'data'}\nWorkingDirectory={machine.tmp}\n" in unit
    assert "DynamicUser" not in unit and unit.endswith("WantedBy=default.target\n")
    assert machine.calls() == ["systemctl --user daemon-reload", "systemctl --user enable --now hermes-gateway"]
    assert "logs: journalctl --user -u hermes-gateway -f" in capsys.readouterr().out


def test_a_failing_systemctl_is_one_line_with_what_it_said(machine, capsys, monkeypatch):
    monkeypatch.setenv("FAIL_WITH", "Failed to connect to bus: No medium found")
    assert main(["service", "install", "--user", "--config", str(machine.config), "--root", str(machine.root)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["hermes-gateway: systemctl --user daemon-reload failed (exit 1): Failed to connect to bus: "
                   "No medium found"]


def test_without_systemd_or_launchd_it_refuses_in_one_line(machine, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(machine.tmp / "nothing"))
    assert main(["service", "install", "--config", str(machine.config), "--root", str(machine.root)]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("hermes-gateway: service needs systemd (systemctl) or launchd (launchctl)")
    assert machine.calls() == []

    (machine.root / "run/systemd/system").rmdir()  # systemctl installed, systemd not running (a container)
    monkeypatch.setenv("PATH", str(machine.tmp / "bin"))
    assert main(["service", "install", "--config", str(machine.config), "--root", str(machine.root)]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "no /run/systemd/system" in line and machine.calls() == []


def test_no_config_and_a_home_install_are_refused_before_anything_is_written(machine, capsys, tmp_path):
    assert main(["service", "install", "--root", str(machine.root)]) == 1
    assert "needs a config file" in capsys.readouterr().err
    inside_home = Path("/home/someone/config.yaml")
    assert main(["service", "install", "--config", str(inside_home), "--root", str(machine.root)]) == 1
    assert "needs a config file" in capsys.readouterr().err  # it does not exist: said before the home rule
    assert not (machine.root / "etc/systemd/system").exists() and machine.calls() == []


def test_launchd_on_macos_writes_a_launch_agent_that_reads_the_env_file(machine, capsys, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    (machine.config.parent / "env").write_text("HERMES_TEST_SECRET=from-the-env-file\n")
    assert main(["service", "install", "--config", str(machine.config)]) == 0
    path = machine.home / "Library/LaunchAgents/hermes-gateway.plist"
    plist = plistlib.loads(path.read_bytes())
    assert plist["Label"] == "hermes-gateway" and plist["RunAtLoad"] is True
    assert plist["ProgramArguments"][-4:] == [str(EXE), "run", "--config", str(machine.config)]
    assert plist["EnvironmentVariables"] == {"HERMES_HOME": str(machine.tmp / "data")}
    assert machine.calls() == [f"launchctl load -w {path}"]
    assert f"logs: tail -f {machine.home / 'Library/Logs/hermes-gateway.log'}" in capsys.readouterr().out
    # the agent's sh reads the env file and then execs the command: run it with `env` in the gateway's place
    argv = plist["ProgramArguments"][:-4] + ["/usr/bin/env"]
    shown = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"}).stdout
    assert "HERMES_TEST_SECRET=from-the-env-file" in shown.splitlines()

    assert main(["service", "uninstall"]) == 0
    assert not path.exists() and machine.calls()[-1] == f"launchctl unload -w {path}"
