"""Every test, the core's and the plugins', runs hermetically.

* Its files go to a temporary data directory, never ~/.hermes.
* No installed plugin loads unless the test asks: ``HERMES_LOAD_PLUGINS`` is
  empty (see :data:`hermes_gateway._core.plugins.LOAD_PLUGINS_ENV`), so a
  third-party plugin installed on the machine cannot change what a core test
  sees. A plugin's own tests ask for that plugin (their ``conftest.py``); a
  test that wants others sets the variable itself. It is set here, at import,
  because some test modules list the known platforms while being collected.
"""

import os

import pytest

os.environ["HERMES_LOAD_PLUGINS"] = ""


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))
