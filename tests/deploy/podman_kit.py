"""Podman for the container tests: this machine's settings, a Debian base built once, images built and run.

Everything this machine needs to run Podman lives here, in the tests' setup, never in the Containerfile: runc as
the runtime and default ulimits no higher than this process's own hard limits (a container may not raise them
here), through a ``containers.conf`` of the test's own (``CONTAINERS_CONF``); the host's pip settings (its index,
local wheel folders and CA bundle) mounted read-only into the build. No registry is reachable, so the base image is
Debian's packages through ``mmdebstrap`` and ``podman import``, tagged by what went into it: a second run (and every
test) reuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
#: The probe's bound: a machine where a container cannot start says so quickly (no user namespaces, no runtime).
PROBE_SECONDS = 60
LOCK = Path(tempfile.gettempdir()) / "hermes-test-podman.lock"


class Unavailable(Exception):
    """Podman cannot run here: the tests skip with this one line."""


def content_tag(name: str, *parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return f"localhost/{name}:{digest.hexdigest()[:16]}"


def containers_conf(folder: Path) -> Path:
    """runc, and ulimits well within this process's hard limits: Podman's defaults are higher, and runc fails to
    set them here (``error setting rlimits``; nproc fails even at 65,536 under a hard limit of 96,369)."""
    limits = []
    for name, which in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        hard = resource.getrlimit(which)[1]
        value = 16384 if hard == resource.RLIM_INFINITY else min(hard, 16384)
        limits.append(f'"{name}={value}:{value}"')
    path = folder / "containers.conf"
    path.write_text(f"[containers]\ndefault_ulimits = [{', '.join(limits)}]\n\n[engine]\nruntime = \"runc\"\n")
    return path


class Podman:
    """``podman`` with this machine's settings; each call bounded in time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {**os.environ, "CONTAINERS_CONF": str(containers_conf(folder))}

    def __call__(self, *args: str, timeout: float = 120, check: bool = True,
                 env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["podman", *args], env={**self.env, **(env or {})}, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def exists(self, image: str) -> bool:
        return self("image", "exists", image, check=False).returncode == 0

    # -- images -------------------------------------------------------------------------------------------------

    def base_image(self) -> str:
        """``mmdebstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm``, imported once."""
        command = ["mmdebstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", SUITE]
        tag = content_tag("hermes-test-base", *command)
        with locked():
            if not self.exists(tag):
                if shutil.which("mmdebstrap") is None:
                    raise Unavailable("mmdebstrap is not installed (apt-get install mmdebstrap)")
                with tempfile.TemporaryDirectory(prefix="hermes-base-") as tmp:
                    tarball = Path(tmp) / "base.tar"
                    made = subprocess.run([*command, str(tarball)], capture_output=True, text=True, timeout=900)
                    if made.returncode != 0:
                        raise Unavailable(f"mmdebstrap failed: {(made.stderr.strip().splitlines() or ['?'])[-1]}")
                    self("import", str(tarball), tag, timeout=300)
        return tag

    def probe(self, image: str) -> None:
        """One ``podman run --rm IMAGE true``, bounded: raises :class:`Unavailable` where containers cannot run."""
        try:
            done = self("run", "--rm", image, "true", timeout=PROBE_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"podman run did not finish within {PROBE_SECONDS} s") from None
        if done.returncode != 0:
            raise Unavailable(f"podman run fails here: {(done.stderr.strip().splitlines() or ['?'])[-1]}")

    def image_id(self, image: str) -> str | None:
        done = self("image", "inspect", "--format", "{{.Id}}", image, check=False)
        return done.stdout.strip() or None if done.returncode == 0 else None

    def drop_others(self, repository: str, keep: str) -> None:
        """Remove the images of ``repository`` other than ``keep`` (earlier builds): the disk is not a cache of all."""
        listed = self("images", "--filter", f"reference={repository}", "--format", "{{.Repository}}:{{.Tag}}").stdout
        for name in set(listed.split()) - {keep}:
            self("rmi", name, check=False)

    def build(self, tag: str, context: Path, *, containerfile: Path | None = None, build_args: dict[str, str],
              target: str | None = None, timeout: float = 900) -> None:
        """``podman build`` (docker format: it keeps HEALTHCHECK) with the host's pip settings mounted read-only."""
        args = ["build", "--format", "docker", "--network", "host", "-t", tag]
        if target:
            args += ["--target", target]
        for name, value in build_args.items():
            args += ["--build-arg", f"{name}={value}"]
        for host_path, inside in pip_mounts(self.folder):
            args += ["-v", f"{host_path}:{inside}:ro"]
        if containerfile is not None:
            args += ["-f", str(containerfile)]
        self(*args, str(context), timeout=timeout)

    def services_image(self, base: str) -> str:
        """Redis and PostgreSQL from Debian's packages (``redis-server``, ``postgresql``) on the base, built once."""
        containerfile = HERE / "services.Containerfile"
        tag = content_tag("hermes-test-services", base, containerfile.read_bytes(),
                          (HERE / "services-entrypoint.sh").read_bytes())
        with locked():
            if not self.exists(tag):
                self.build(tag, HERE, containerfile=containerfile, build_args={"BASE": base})
                self.drop_others("localhost/hermes-test-services", tag)
        return tag

    # -- containers -----------------------------------------------------------------------------------------------

    def host_port(self, container: str, port: int) -> int:
        out = self("port", container, f"{port}/tcp").stdout.strip().splitlines()[0]
        return int(out.rpartition(":")[2])

    def inspect(self, container: str) -> dict:
        return json.loads(self("inspect", container).stdout)[0]

    def logs(self, container: str) -> str:
        done = self("logs", container, check=False)
        return done.stdout + done.stderr


def pip_mounts(folder: Path) -> list[tuple[str, str]]:
    """The host's effective pip settings as one ``/etc/pip.conf``, plus every local file or folder they name.

    ``pip config list`` shows every setting with its origin (files and ``PIP_*`` variables); each becomes a
    ``[global]`` line, and a path or ``file://`` URL in it is mounted at the same place in the build.
    """
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            timeout=60).stdout
    settings: dict[str, str] = {}
    for line in listed.splitlines():
        found = re.fullmatch(r"[^.]*\.([\w-]+)='(.*)'", line.strip())
        if found:
            settings[found.group(1)] = found.group(2)
    mounts: dict[str, str] = {}
    for value in settings.values():
        for word in value.split():
            path = Path(word.removeprefix("file://")) if word.startswith(("file://", "/")) else None
            if path is None or not path.exists():
                continue
            if path.name == "simple" and path.is_dir():  # an index's pages link to ../../files
                path = path.parent
            mounts[str(path)] = str(path)
    conf = folder / "pip.conf"
    conf.write_text("[global]\n" + "".join(f"{key} = {value}\n" for key, value in settings.items()))
    return [(str(conf), "/etc/pip.conf"), *mounts.items()]


class locked:
    """One process at a time builds a shared image (tests may run in parallel processes)."""

    def __enter__(self) -> None:
        self.file = open(LOCK, "a")
        fcntl.flock(self.file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()


def project_image(podman: Podman, base: str, plugins: str = "telegram discord slack whatsapp") -> str:
    """The project's Containerfile on ``base``; Podman's layer cache makes an unchanged rebuild quick.

    The build stage gets a name of its own, so the layer with the dependencies stays cached while the images of
    earlier builds (a change to the sources) are removed: a rebuild after a change to the gateway takes seconds.
    """
    tag = content_tag("hermes-gateway-test", base, plugins)
    stage = tag.replace("/hermes-gateway-test:", "/hermes-gateway-test-build:")
    earlier = {podman.image_id(tag), podman.image_id(stage)} - {None}
    with locked():
        podman.build(stage, ROOT, build_args={"BASE": base, "PLUGINS": plugins}, target="build")
        podman.build(tag, ROOT, build_args={"BASE": base, "PLUGINS": plugins})
        for image_id in earlier - {podman.image_id(tag), podman.image_id(stage)}:
            podman("rmi", image_id, check=False)
    return tag


def http(method: str, url: str, body: dict | None = None, key: str | None = None,
         timeout: float = 30) -> tuple[int, dict]:
    """One request; the status and the JSON body (errors included)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def wait_healthy(url: str, seconds: float, why: Callable[[], str]) -> None:
    """Poll ``url`` (``/health``) until it answers 200, within ``seconds``; then fail with ``why()``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if http("GET", url, timeout=5)[0] == 200:
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer 200 within {seconds} s:\n{why()}")
        time.sleep(0.3)


def chat(base_url: str, key: str, text: str) -> str:
    """A chat completion through the API: the reply's text."""
    status, body = http("POST", f"{base_url}/v1/chat/completions", {
        "model": "hermes-gateway", "messages": [{"role": "user", "content": text}]}, key=key)
    assert status == 200, body
    return body["choices"][0]["message"]["content"]


def response_text(body: dict) -> str:
    """The text of a ``/v1/responses`` answer (what the SDK's ``output_text`` gives)."""
    return "".join(part.get("text", "") for item in body.get("output", []) if item.get("type") == "message"
                   for part in item.get("content", []) if part.get("type") == "output_text")
