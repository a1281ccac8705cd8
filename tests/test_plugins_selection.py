"""``HERMES_LOAD_PLUGINS``: which installed plugins load (unset: all; a list: those; empty: none)."""

from __future__ import annotations

import pytest

from fake_dist import install_dist
from hermes_gateway import installed_plugins, make_plugins


def platform_plugin(name: str) -> str:
    return f"""
        import hermes_gateway
        @hermes_gateway.hookimpl
        def register_platforms(register):
            register(hermes_gateway.Platform(name="{name}"))
        @hermes_gateway.hookimpl
        def on_stream_end(stream, message, text):
            return message
    """


@pytest.fixture
def two_installed(tmp_path, monkeypatch):
    """Two installed plugins, entry points ``alpha`` and ``beta``, each with a platform of that name."""
    for name in ("alpha", "beta"):
        install_dist(tmp_path, f"hg_{name}_plugin", platform_plugin(name), f"{name} = hg_{name}_plugin")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_unset_loads_every_installed_plugin(two_installed, monkeypatch):
    monkeypatch.delenv("HERMES_LOAD_PLUGINS")
    assert {"alpha", "beta", "reference"} <= set(make_plugins().platforms())


def test_a_list_loads_only_the_entry_points_it_names(two_installed, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", " beta , nonexistent")
    plugins = make_plugins()
    assert sorted(plugins.platforms()) == ["beta", "reference", "web"]
    assert plugins.origins["beta"] == "entry point of hg_beta_plugin"
    assert plugins.problems == [], "a name that is not installed is simply not loaded"


def test_empty_loads_no_installed_plugin_but_the_built_ins_still_load(two_installed, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "")
    assert sorted(make_plugins().platforms()) == ["reference", "web"]


def test_a_plugin_passed_directly_loads_whatever_the_variable_says(two_installed, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "")
    import hermes_gateway._core.builtin.reference as reference

    plugins = make_plugins(builtins=(), extra=[reference])
    assert list(plugins.platforms()) == ["reference"]


def test_the_shared_plugins_are_loaded_once_per_selection(two_installed, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "alpha")
    alpha = installed_plugins()
    assert installed_plugins() is alpha and sorted(alpha.platforms()) == ["alpha", "reference", "web"]
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "beta")
    assert sorted(installed_plugins().platforms()) == ["beta", "reference", "web"]
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "alpha")
    assert installed_plugins() is alpha
