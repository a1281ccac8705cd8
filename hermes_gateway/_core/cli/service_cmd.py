"""``hermes-gateway service install [--user]`` / ``service uninstall``: this installation as a service that starts itself.

systemd (Linux): writes docs/deploy.md's unit for this venv's executable and this config
(``/etc/systemd/system/hermes-gateway.service``, or ``~/.config/systemd/user/`` with ``--user``), then
``systemctl [--user] daemon-reload`` and ``enable --now``; launchd (macOS): a LaunchAgent plist in
``~/Library/LaunchAgents`` and ``launchctl load -w``. Each prints where its logs are. Where neither manager runs it
refuses in one line: a service nobody starts would be worse than none.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..config import data_dir, find_config_path, load_config
from ..errors import HermesError
from .service_units import NAME, Installation, launchd_plist, system_unit, user_unit

#: Folders the system unit hides from the service (ProtectHome=yes), and its DynamicUser could not read anyway.
HOMES = (Path("/home"), Path("/root"), Path("/run/user"))


class Refused(HermesError):
    """One line: why the service cannot be installed (or uninstalled) here."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("install", "uninstall"), help="install (and start) or uninstall the service")
    parser.add_argument("--user", action="store_true", help="a service of your own user (systemctl --user) instead "
                                                            "of a system service (which needs root)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")
    parser.add_argument("--root", metavar="DIR", help="treat DIR as / for the system unit and the systemd check "
                                                      "(packaging; tests)")


def run(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else Path("/")
    try:
        manager = service_manager(root)
        if manager == "launchd":
            return launchd(args)
        return systemd(args, root)
    except Refused as exc:
        print(f"hermes-gateway: {exc}", file=sys.stderr)
        return 1


def service_manager(root: Path) -> str:
    """``launchd`` on macOS, ``systemd`` where systemd runs (``/run/systemd/system``, sd_booted's test)."""
    if sys.platform == "darwin" and shutil.which("launchctl"):
        return "launchd"
    if shutil.which("systemctl"):
        if (root / "run/systemd/system").is_dir():
            return "systemd"
        raise Refused("service needs systemd running (systemctl is installed, but there is no /run/systemd/system: "
                      "a container or another init?); run `hermes-gateway run` under your own supervisor instead")
    raise Refused("service needs systemd (systemctl) or launchd (launchctl), and this machine has neither; run "
                  "`hermes-gateway run` under your own supervisor instead (docs/deploy.md)")


def installation(args: argparse.Namespace) -> Installation:
    """This venv's ``hermes-gateway``, the config it would read (absolute, checked now), and where it works."""
    found = find_config_path(args.config)
    if found is None or not found.is_file():
        where = str(found) if found else "$HERMES_CONFIG, ./config.yaml or ~/.hermes/config.yaml"
        raise Refused(f"service install needs a config file, and there is none at {where}: pass --config FILE")
    config = found.absolute()
    load_config(config, allow_unset_env=True)  # a mistake in it is one line now, not a service failing later
    beside = Path(sys.executable).parent / NAME  # the console script of this venv (not resolved: a venv's python
    executable = beside if beside.is_file() else Path(shutil.which(NAME) or beside)  # is a symlink)
    return Installation(executable=executable.absolute(), config=config, workdir=Path.cwd(),
                        data=data_dir().absolute())


def systemd(args: argparse.Namespace, root: Path) -> int:
    user = ["--user"] if args.user else []
    if args.user:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "systemd" / "user"
    else:
        folder = root / "etc/systemd/system"
        if args.action == "install" and root == Path("/") and os.geteuid() != 0:
            raise Refused("a system service needs root: sudo hermes-gateway service install, or --user for "
                          "a service of your own")
    unit = folder / f"{NAME}.service"
    if args.action == "uninstall":
        if not unit.is_file():
            raise Refused(f"no service to uninstall: {unit} does not exist")
        systemctl(*user, "disable", "--now", NAME)
        unit.unlink()
        print(f"removed {unit}")
        systemctl(*user, "daemon-reload")
        return 0
    inst = installation(args)
    if not args.user:
        for path in (inst.executable, inst.config):
            for home in (h for h in HOMES if path.is_relative_to(h)):
                raise Refused(f"{path} is under {home}, which the system service "
                              "cannot read (ProtectHome=yes, its own user): install under /opt and /etc as "
                              "docs/deploy.md shows, or use --user")
    folder.mkdir(parents=True, exist_ok=True)
    existed = unit.exists()
    unit.write_text(user_unit(inst) if args.user else system_unit(inst), encoding="utf-8")
    print(f"wrote {unit}" + (" (replacing the one there)" if existed else ""))
    systemctl(*user, "daemon-reload")
    systemctl(*user, "enable", "--now", NAME)
    print(f"logs: journalctl {'--user ' if args.user else ''}-u {NAME} -f")
    if args.user:
        print("to keep it running after you log out: loginctl enable-linger")
    return 0


def launchd(args: argparse.Namespace) -> int:
    plist = Path.home() / "Library" / "LaunchAgents" / f"{NAME}.plist"
    if args.action == "uninstall":
        if not plist.is_file():
            raise Refused(f"no service to uninstall: {plist} does not exist")
        call("launchctl", "unload", "-w", str(plist))
        plist.unlink()
        print(f"removed {plist}")
        return 0
    inst = installation(args)
    log = Path.home() / "Library" / "Logs" / f"{NAME}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    plist.parent.mkdir(parents=True, exist_ok=True)
    if plist.exists():
        call("launchctl", "unload", "-w", str(plist), check=False)  # load again below: launchd rereads it
    plist.write_bytes(launchd_plist(inst, log))
    print(f"wrote {plist}")
    call("launchctl", "load", "-w", str(plist))
    print(f"logs: tail -f {log}")
    return 0


def systemctl(*args: str) -> None:
    call("systemctl", *args)


def call(*argv: str, check: bool = True) -> None:
    """Run the service manager; its failure is one line with what it said."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise Refused(f"{' '.join(argv)} failed (exit {done.returncode}): {said[-1] if said else 'no output'}")
    print("ran " + " ".join(argv))
