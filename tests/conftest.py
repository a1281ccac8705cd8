"""Suite-wide settings. ``--hypothesis-profile=deep`` runs the property tests much longer."""

from hypothesis import settings

settings.register_profile("ci", max_examples=150)
settings.register_profile("deep", max_examples=3000)
settings.load_profile("ci")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own data directory: no test reads or writes the person's ~/.hermes."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes-home")))
