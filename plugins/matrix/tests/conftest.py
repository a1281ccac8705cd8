"""Fixtures for the matrix plugin's tests: one real Synapse per test process, users and a fault proxy per test."""

from __future__ import annotations

import pytest

from matrix_synapse_server import Synapse, process_cpu, synapse_installed


@pytest.fixture(autouse=True)
def hermes_home(tmp_path, monkeypatch):
    """Conversations and seen event ids go to a fresh data directory, never the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes-home"))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch):
    """Of the installed plugins only this one loads, in this process and the commands it starts."""
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "matrix")


@pytest.fixture(scope="session")
def synapse(tmp_path_factory):
    """A Synapse homeserver on 127.0.0.1, started the first time a test asks for it in this process."""
    if not synapse_installed():
        pytest.skip("matrix-synapse is not installed (pip install -e 'plugins/matrix[test]')")
    server = Synapse(tmp_path_factory.mktemp("synapse"))
    server.start()
    yield server
    if server.process is not None:
        print(f"\nsynapse used {process_cpu(server.process.pid):.1f} s of CPU ({server.start_cpu:.1f} s to start)")
    server.stop()
