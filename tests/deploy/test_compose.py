"""deploy/compose.yaml brought up with podman-compose, as shipped (its config.yaml included): two gateway replicas
on PostgreSQL and Redis (images built from Debian's packages by the test). A chat completion through each replica,
and one conversation store: a response stored through one replica is continued through the other."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from podman_kit import ROOT, chat, http, project_image, response_text, wait_healthy

pytestmark = [pytest.mark.container, pytest.mark.timeout(900)]
KEY = "compose-key-" + uuid.uuid4().hex


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def stack(podman, tmp_path_factory):
    if shutil.which("podman-compose") is None and not (Path(sys.executable).parent / "podman-compose").exists():
        pytest.skip("podman-compose is not installed (pip install -e '.[test]' installs it)")
    gateway = project_image(podman, podman.base)  # the image test's, from the layer cache
    services = podman.services_image(podman.base)
    folder = tmp_path_factory.mktemp("compose")
    for name in ("compose.yaml", "config.yaml"):
        shutil.copy(ROOT / "deploy" / name, folder / name)
    ports = free_port(), free_port()
    password = f"pw{uuid.uuid4().hex}"
    (folder / ".env").write_text(
        f"HERMES_API_KEY={KEY}\nPOSTGRES_PASSWORD={password}\nHERMES_IMAGE={gateway}\n"
        f"POSTGRES_IMAGE={services}\nREDIS_IMAGE={services}\n"
        f"HERMES_PUBLISH_1=127.0.0.1:{ports[0]}\nHERMES_PUBLISH_2=127.0.0.1:{ports[1]}\n")
    project = f"hermes-test-{uuid.uuid4().hex[:8]}"
    compose_cmd = [str(Path(sys.executable).parent / "podman-compose"), "-p", project, "-f",
                   str(folder / "compose.yaml")]

    def compose(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*compose_cmd, *args], cwd=folder, env=podman.env, capture_output=True, text=True,
                              timeout=timeout)

    up = compose("up", "-d", "--no-build")
    urls = [f"http://127.0.0.1:{port}" for port in ports]

    def logs() -> str:
        done = compose("logs", timeout=60)
        return f"up: {up.stdout}\n{up.stderr}\nlogs: {done.stdout}\n{done.stderr}"

    try:
        assert up.returncode == 0, logs()
        for url in urls:
            wait_healthy(f"{url}/health", 120, logs)
        yield urls, podman, project, password
    finally:
        compose("down", "-v", "-t", "10", timeout=180)


def test_each_replica_answers_and_they_share_one_conversation_store(stack):
    urls, *_ = stack
    for i, url in enumerate(urls):
        assert chat(url, KEY, f"echo: replica {i + 1} answers") == f"replica {i + 1} answers"
    status, first = http("POST", f"{urls[0]}/v1/responses", {"model": "hermes-gateway", "input": "echo: one"},
                         key=KEY)
    assert status == 200, first
    status, read = http("GET", f"{urls[1]}/v1/responses/{first['id']}", key=KEY)
    assert status == 200 and response_text(read) == "one", read
    status, second = http("POST", f"{urls[1]}/v1/responses", {"model": "hermes-gateway", "input": "echo: two",
                                                              "previous_response_id": first["id"]}, key=KEY)
    assert status == 200 and response_text(second) == "two", second


def test_the_database_is_created_utf8(stack):
    urls, podman, project, password = stack
    done = podman("exec", "-e", f"PGPASSWORD={password}", f"{project}_postgres_1", "psql", "-h", "127.0.0.1",
                  "-U", "hermes", "-d", "hermes", "-tAc", "SHOW server_encoding")
    assert done.stdout.strip() == "UTF8"
