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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long`` (mypy, whole-program checks) run first: under pytest-xdist they then overlap the
    rest of the suite on one worker instead of running alone at its end. The order is otherwise kept."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``addopts`` in pyproject.toml): two pytest-xdist workers per usable core, since most of the
    suite's wall time is spent waiting (servers on 127.0.0.1, subprocesses, real timers), not computing; see
    bench/README.md, "Test suite time". ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still chooses, as in pytest-xdist."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    return 2 * len(os.sched_getaffinity(0))
