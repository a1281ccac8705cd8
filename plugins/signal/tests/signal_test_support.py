"""What the signal plugin's tests share: the people, the settings, a runner against the emulator."""

from __future__ import annotations

from typing import Any

from hermes_gateway.testing import PlatformRunner, eventually
from hermes_signal import plugin
from hermes_signal.emulator import ACCOUNT, SignalDaemonEmulator

ALICE = "+4915100000001"
BOB = "+4915100000002"
GROUP = "Z3JvdXAtb25lLWZvci10ZXN0cw=="   # a groupId is base64
__all__ = ["ACCOUNT", "ALICE", "BOB", "GROUP", "eventually", "runner", "section", "config"]


def section(daemon: SignalDaemonEmulator, **extra: Any) -> dict[str, Any]:
    return {"account": ACCOUNT, "url": daemon.base_url, "timeout": 5, **extra}


def runner(daemon: SignalDaemonEmulator, *, start: bool = True, limits: Any = None, **extra: Any) -> PlatformRunner:
    return PlatformRunner(plugin, section(daemon, **extra), start=start, limits=limits)


def config(daemon: SignalDaemonEmulator, **extra: Any) -> dict[str, Any]:
    """A gateway's config: the demo model, streaming on, Signal through the emulator."""
    return {"model": {"demo": {"tokens_per_second": 0}}, "streaming": {"signal": True},
            "platforms": {"signal": {"enabled": True, **section(daemon, **extra)}}}
