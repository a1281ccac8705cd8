"""The text of the service ``hermes-gateway service install`` writes: docs/deploy.md's systemd unit, or a launchd plist.

Kept apart from the command so the unit is one function of one installation (the executable, the config, where
state lives), and ``tests/test_deploy_doc.py`` can check that the unit the page shows is the one this writes.
"""

from __future__ import annotations

import plistlib
from dataclasses import dataclass
from pathlib import Path

NAME = "hermes-gateway"
#: Where systemd's system service keeps state (``StateDirectory=``), and so ``HERMES_HOME`` and the working directory.
SYSTEM_STATE = Path("/var/lib/hermes-gateway")


@dataclass(frozen=True)
class Installation:
    """This installation: the console script of its venv, its config file, and (user services) where it works."""

    executable: Path
    config: Path
    workdir: Path       # a user service's working directory (the system service's is SYSTEM_STATE)
    data: Path          # a user service's HERMES_HOME

    @property
    def env_file(self) -> Path:
        """The secrets beside the config (``/etc/hermes-gateway/env``): optional, read by systemd before it starts."""
        return self.config.parent / "env"


def quoted(value: str | Path) -> str:
    """One word of a unit file's command line: quoted when it has spaces, ``%`` doubled (systemd's specifiers)."""
    text = str(value).replace("%", "%%")
    if any(ch.isspace() or ch in "\"'\\" for ch in text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def system_unit(inst: Installation) -> str:
    """docs/deploy.md's unit: a user made for the service alone, state in /var/lib/hermes-gateway, sandboxed."""
    return f"""[Unit]
Description=hermes-gateway: LLM replies streamed into chat platforms
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
ExecStart={quoted(inst.executable)} run --config {quoted(inst.config)}
# the secrets, readable by root only (systemd reads them before it drops privileges); - : optional
EnvironmentFile=-{quoted(inst.env_file)}
# conversations (state.db) live in HERMES_HOME: /var/lib/hermes-gateway, made by StateDirectory=
Environment=HERMES_HOME={SYSTEM_STATE}
WorkingDirectory={SYSTEM_STATE}
StateDirectory=hermes-gateway
StateDirectoryMode=0700
DynamicUser=yes
Restart=on-failure
RestartSec=5
# exit status 2 is a config error: restarting would not fix it
RestartPreventExitStatus=2
# SIGTERM: stop receiving, let replies finish (conversation.shutdown_grace, 5 s), exit 0
TimeoutStopSec=30
LimitNOFILE=16384
UMask=0077
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
LockPersonality=yes
SystemCallArchitectures=native
CapabilityBoundingSet=

[Install]
WantedBy=multi-user.target
"""


def user_unit(inst: Installation) -> str:
    """A user's own service (``systemctl --user``): it runs as that user, with their files where they are.

    The system unit's sandbox (DynamicUser, ProtectHome, ...) needs a system manager; a user manager cannot
    apply most of it, and the user's config and venv are usually in their home anyway.
    """
    return f"""[Unit]
Description=hermes-gateway: LLM replies streamed into chat platforms
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
ExecStart={quoted(inst.executable)} run --config {quoted(inst.config)}
EnvironmentFile=-{quoted(inst.env_file)}
Environment=HERMES_HOME={quoted(inst.data)}
WorkingDirectory={quoted(inst.workdir)}
Restart=on-failure
RestartSec=5
# exit status 2 is a config error: restarting would not fix it
RestartPreventExitStatus=2
# SIGTERM: stop receiving, let replies finish (conversation.shutdown_grace, 5 s), exit 0
TimeoutStopSec=30
UMask=0077
NoNewPrivileges=yes

[Install]
WantedBy=default.target
"""


def launchd_plist(inst: Installation, log: Path) -> bytes:
    """A LaunchAgent: started at login and started again after a failure, not after a clean exit (launchd cannot
    single out a config error's status 2 as systemd does: ``ThrottleInterval`` spaces its tries).

    launchd reads no environment file, so with one beside the config the agent runs ``sh`` to read it first
    (``set -a; . FILE``) and then execs the gateway; the paths are arguments, never pasted into the script.
    """
    run = [str(inst.executable), "run", "--config", str(inst.config)]
    if inst.env_file.is_file():
        run = ["/bin/sh", "-c", 'set -a; . "$0"; set +a; exec "$@"', str(inst.env_file), *run]
    return plistlib.dumps({
        "Label": NAME,
        "ProgramArguments": run,
        "WorkingDirectory": str(inst.workdir),
        "EnvironmentVariables": {"HERMES_HOME": str(inst.data)},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        "ExitTimeOut": 30,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    })
