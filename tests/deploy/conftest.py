"""The container tests' shared setup: Podman with this machine's settings and the Debian base, once per session.

Marked ``container`` and deselected by the default test command (pyproject's addopts: they take minutes); run them
with ``python -m pytest -m container tests/deploy -n 0``. Where Podman cannot run (not installed, no user
namespaces, no runtime) they skip in one line: the probe is one ``podman run --rm BASE true``, bounded.
"""

from __future__ import annotations

import shutil

import pytest

from podman_kit import Podman, Unavailable


@pytest.fixture(scope="session")
def podman(tmp_path_factory) -> Podman:
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (apt-get install podman mmdebstrap uidmap slirp4netns runc)")
    tool = Podman(tmp_path_factory.mktemp("podman"))
    try:
        tool.base = tool.base_image()  # type: ignore[attr-defined]
        tool.probe(tool.base)  # type: ignore[attr-defined]
    except Unavailable as exc:
        pytest.skip(f"podman cannot run containers here: {exc}")
    return tool
