#!/opt/hermes-gateway/bin/python
"""The image's entrypoint: check /data, choose the config, wait for the services named, then become hermes-gateway.

Why a step before the gateway: the most common container failure is a volume the container's user cannot write (a
host folder owned by another uid); the gateway would fail later, deep in a store error. Here it is one line saying
what to do. It never chowns anything: it runs as the image's unprivileged user, and changing a host folder's owner is
the operator's decision (``chown 10001``, Podman's ``:U`` or ``--userns=keep-id``).

The config is ``$HERMES_CONFIG`` when set, else ``/config/config.yaml`` when mounted, else the image's own
(``/etc/hermes-gateway/config.yaml``: the demo model, the API on 0.0.0.0 with the key from ``HERMES_API_KEY``).
``HERMES_WAIT_FOR="db:5432 redis:6379"`` waits (``HERMES_WAIT_SECONDS``, 60) until each accepts a TCP connection, so
the gateway starts once its database is there rather than failing into it.

It ends in ``exec``: the gateway becomes PID 1 and its own SIGTERM handler stops it gracefully.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

MOUNTED_CONFIG = Path("/config/config.yaml")
IMAGE_CONFIG = Path("/etc/hermes-gateway/config.yaml")
#: Setup errors that a restart would not fix exit 2, like the gateway's config errors.
EXIT_SETUP = 2


class SetupError(Exception):
    """One line for the operator, and the exit status."""

    def __init__(self, line: str, status: int = EXIT_SETUP) -> None:
        super().__init__(line)
        self.status = status


def check_writable(data: Path) -> None:
    """Create and remove a file in ``data``: the store, media and chat history all live there."""
    probe = data / f".hermes-write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        uid, gid = os.getuid(), os.getgid()
        try:
            owner = f"owned by uid {data.stat().st_uid}"
        except OSError:
            owner = "missing"
        raise SetupError(
            f"hermes-gateway: {data} is not writable by this container's user (uid {uid}; {data} is {owner}: "
            f"{exc.strerror}): chown -R {uid}:{gid} the host folder, or with Podman mount it with :U "
            f"(-v DIR:{data}:U) or run with --userns=keep-id:uid={uid},gid={gid}") from None


def choose_config(env: dict[str, str], mounted: Path = MOUNTED_CONFIG, image: Path = IMAGE_CONFIG) -> str:
    """``$HERMES_CONFIG``, else the mounted ``/config/config.yaml``, else the image's own."""
    if env.get("HERMES_CONFIG"):
        return env["HERMES_CONFIG"]
    return str(mounted if mounted.is_file() else image)


def check_image_config(config: str, env: dict[str, str], command: str, image: Path = IMAGE_CONFIG) -> None:
    """The image's config listens on 0.0.0.0, so it needs a key; say so before the gateway does, in its terms."""
    if config == str(image) and command == "run" and not env.get("HERMES_API_KEY", "").strip():
        raise SetupError(
            "hermes-gateway: set HERMES_API_KEY (-e HERMES_API_KEY=...): the image's config serves the API on "
            "0.0.0.0:8642 and a listener others can reach needs the key clients send as 'Authorization: Bearer KEY' "
            "(it also signs in to /ui); or mount your config.yaml at /config/config.yaml")


def wait_for(spec: str, seconds: float, say=print) -> None:
    """Wait until every ``host:port`` of ``spec`` accepts a TCP connection, ``seconds`` in all."""
    deadline = time.monotonic() + seconds
    for target in spec.split():
        host, sep, port = target.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise SetupError(f"hermes-gateway: HERMES_WAIT_FOR: host:port items separated by spaces, got {target!r}")
        said = False
        while True:
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                    break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise SetupError(f"hermes-gateway: {target} did not accept a connection within {seconds:g} s "
                                     f"(HERMES_WAIT_FOR; last: {exc.strerror or exc}): is it running?", 1) from None
                if not said:
                    say(f"hermes-gateway: waiting for {target} (HERMES_WAIT_FOR)", file=sys.stderr, flush=True)
                    said = True
                time.sleep(0.5)


def prepare(argv: list[str], env: dict[str, str]) -> list[str]:
    """Everything before the exec; returns the gateway's argv. Raises :class:`SetupError`."""
    args = argv or ["run"]
    check_writable(Path(env.get("HERMES_HOME") or "/data"))
    config = choose_config(env)
    env["HERMES_CONFIG"] = config
    check_image_config(config, env, next((a for a in args if not a.startswith("-")), ""))
    if env.get("HERMES_WAIT_FOR", "").strip():
        try:
            seconds = float(env.get("HERMES_WAIT_SECONDS") or 60)
        except ValueError:
            raise SetupError("hermes-gateway: HERMES_WAIT_SECONDS: a number of seconds, got "
                             f"{env['HERMES_WAIT_SECONDS']!r}") from None
        wait_for(env["HERMES_WAIT_FOR"], seconds)
    return ["hermes-gateway", *args]


def main() -> int:
    env = dict(os.environ)
    try:
        argv = prepare(sys.argv[1:], env)
    except SetupError as exc:
        print(exc, file=sys.stderr)
        return exc.status
    os.execvpe(argv[0], argv, env)
    return 127  # not reached: exec replaces this process


if __name__ == "__main__":
    sys.exit(main())
