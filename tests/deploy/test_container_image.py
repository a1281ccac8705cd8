"""The Containerfile, built on a Debian base and run with Podman, as an operator would: health, a chat completion,
a restart that keeps the conversation (the /data volume), a graceful stop on SIGTERM, and the one line a volume
the container's user cannot write gets."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from podman_kit import chat, http, project_image, response_text, wait_healthy

pytestmark = [pytest.mark.container, pytest.mark.timeout(900)]
KEY = "test-key-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def image(podman) -> str:
    return project_image(podman, podman.base)


@pytest.fixture
def start(podman, image):
    """Run the image detached (port 8642 on a free loopback port); every container is removed at the end."""
    names: list[str] = []

    def run(*args: str, env: dict[str, str] | None = None) -> tuple[str, str]:
        name = f"hermes-test-{uuid.uuid4().hex[:10]}"
        names.append(name)
        flags = [f"-e{k}={v}" for k, v in (env or {"HERMES_API_KEY": KEY}).items()]
        podman("run", "-d", "--name", name, "-p", "127.0.0.1::8642", *flags, *args, image)
        return name, f"http://127.0.0.1:{podman.host_port(name, 8642)}"

    yield run
    for name in names:
        podman("rm", "-f", "-t", "0", name, check=False)


def test_health_chat_restart_keeps_the_conversation_and_sigterm_stops_gracefully(podman, start, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    name, url = start("-v", f"{data}:/data:U")  # :U: the host folder becomes the container user's
    wait_healthy(f"{url}/health", 90, lambda: podman.logs(name))
    assert podman("healthcheck", "run", name, check=False).returncode == 0, "the image's HEALTHCHECK passes"
    assert podman.inspect(name)["Config"]["User"] == "10001:10001"

    assert chat(url, KEY, "echo: hello from a container") == "hello from a container"
    assert http("POST", f"{url}/v1/chat/completions", {"model": "hermes-gateway", "messages": []})[0] == 401
    status, first = http("POST", f"{url}/v1/responses", {"model": "hermes-gateway", "input": "echo: remember me"},
                         key=KEY)
    assert status == 200 and response_text(first) == "remember me", first

    began = time.monotonic()
    podman("stop", "-t", "30", name, timeout=60)
    took = time.monotonic() - began
    state = podman.inspect(name)["State"]
    assert state["ExitCode"] == 0, podman.logs(name)
    assert took < 15, f"SIGTERM took {took:.1f} s: the gateway's graceful stop is within shutdown_grace + 5 s"
    assert "hermes-gateway: stopped" in podman.logs(name)
    assert (data / "state.db").is_file(), "the store lives in the /data volume"

    # a new container on the same volume (an upgrade): the stored response chain continues
    name, url = start("-v", f"{data}:/data:U")
    wait_healthy(f"{url}/health", 90, lambda: podman.logs(name))
    status, again = http("GET", f"{url}/v1/responses/{first['id']}", key=KEY)
    assert status == 200 and response_text(again) == "remember me", again
    status, second = http("POST", f"{url}/v1/responses", {"model": "hermes-gateway", "input": "echo: and then",
                                                         "previous_response_id": first["id"]}, key=KEY)
    assert status == 200 and response_text(second) == "and then", second


def test_a_volume_the_user_cannot_write_is_one_line_saying_what_to_do(podman, image, tmp_path):
    data = tmp_path / "root-owned"
    data.mkdir()
    os.chmod(data, 0o755)  # owned by this test's user (root), not by the container's uid 10001
    done = podman("run", "--rm", "-e", f"HERMES_API_KEY={KEY}", "-v", f"{data}:/data", image, check=False)
    lines = [line for line in done.stderr.splitlines() if line.startswith("hermes-gateway:")]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "/data is not writable" in lines[0] and "chown -R 10001:10001" in lines[0] \
        and ":U" in lines[0] and "--userns=keep-id" in lines[0], done.stderr


def test_the_image_config_without_a_key_refuses_in_one_line(podman, image):
    done = podman("run", "--rm", image, check=False)
    assert done.returncode == 2
    assert "set HERMES_API_KEY" in done.stderr and "/config/config.yaml" in done.stderr, done.stderr
