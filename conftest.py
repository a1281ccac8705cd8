"""Every test, the core's and the plugins', keeps its files in a temporary data directory, never ~/.hermes."""

import pytest


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))
