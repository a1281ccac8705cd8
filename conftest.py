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
from pathlib import Path

import pytest

os.environ["HERMES_LOAD_PLUGINS"] = ""


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path_factory.mktemp("hermes_home")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` (mypy, a nested pytest run) start first, each on a worker of its own: under
    pytest-xdist they then overlap the rest of the suite instead of queueing behind each other or running alone
    at its end. ``--dist worksteal`` hands worker *i* the *i*-th contiguous slice of the list, so each long test
    heads a slice; otherwise they head the list. The order of the rest is kept (every worker computes the same)."""
    long = [item for item in items if item.get_closest_marker("long") is not None]
    if not long:
        return
    rest = [item for item in items if item.get_closest_marker("long") is None]
    handed = getattr(config, "workerinput", {})  # on a pytest-xdist worker: what the controller handed over
    workers = handed.get("workercount", 1)
    if workers < 2 or handed.get("suite_dist") != "worksteal":
        items[:] = long + rest
        return
    ordered: list[pytest.Item] = []
    start = 0
    for worker in range(workers):  # the slices WorkStealingScheduling.check_schedule hands out at the start
        size = (len(items) - start) // (workers - worker)
        heads = long[worker::workers]
        ordered += heads + rest[:size - len(heads)]
        del rest[:size - len(heads)]
        start += size
    items[:] = ordered + rest


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001 (xdist's WorkerController)
    """Tell each worker the ``--dist`` mode (a worker's own option says ``no``) for the order above."""
    node.workerinput["suite_dist"] = node.config.getoption("dist")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``addopts`` in pyproject.toml): two pytest-xdist workers per usable core, since much of the
    suite's wall time is spent waiting (servers on 127.0.0.1, subprocesses, real timers), not computing. Three per
    core finished sooner (9:38–9:58 against 10:43 on a quiet 2-core machine) but failed tests whose bounds are
    wall-clock (a PDF's 2 s budget, Telegram's draft timing) in two runs of three; see bench/README.md, "Test
    suite time". ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still chooses, as in pytest-xdist."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    return 2 * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the gateway, its plugins and the tests' helpers once, before any worker or subprocess starts.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on this project's machines) Python never caches what it compiles, so
    every pytest-xdist worker and every ``hermes-gateway`` subprocess a test starts compiled the whole gateway
    from source again (1.5 s of CPU a process; the suite starts well over a hundred). ``compileall`` writes the
    caches whatever that variable says; importing then only reads them. Nothing a test checks depends on it.
    """
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller compiled already
        return
    import compileall

    root = Path(__file__).resolve().parent
    folders = [root / "hermes_gateway", *sorted((root / "plugins").glob("*/hermes_*")), root / "tests"]
    for folder in folders:
        if folder.is_dir():
            compileall.compile_dir(str(folder), quiet=2, workers=0)
    if config.getoption("numprocesses", None):  # pytest-xdist workers will collect: rewrite their tests once here
        _rewrite_test_modules_once(config, root)


def _rewrite_test_modules_once(config: pytest.Config, root: Path) -> None:
    """Write pytest's assertion-rewritten caches of every test module and conftest before the workers start.

    Each pytest-xdist worker collects the whole suite, and 60 % of that CPU is rewriting asserts; with
    ``PYTHONDONTWRITEBYTECODE`` set, pytest never caches the rewrite, so every worker redid all of it (~13 s of
    CPU each). Workers *read* such caches whatever that variable says (``AssertionRewritingHook.exec_module``
    checks for one before rewriting), and a cache is keyed on the source's hash, so a stale one is never used.
    This leans on pytest's private helpers: if they change, it does nothing and the workers rewrite as before.
    """
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc, assertstate_key, get_cache_dir
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:  # --assert=plain: nothing is rewritten
        return
    paths = [root / path for path in config.getini("testpaths")]
    for folder in paths:
        for source in [*folder.rglob("test_*.py"), *folder.rglob("conftest.py")]:
            if ".venv" in source.parts or "node_modules" in source.parts:
                continue
            cache = get_cache_dir(source)
            try:
                cache.mkdir(exist_ok=True)
                source_hash, code = _rewrite_test(source, config)
            except (OSError, SyntaxError):
                continue  # the worker reports it while collecting, as before
            _write_pyc(state, code, source_hash, cache / (source.name[:-3] + PYC_TAIL))
