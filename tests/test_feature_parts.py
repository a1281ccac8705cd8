"""The built-in features are plugins built from typed parts: none of them is handed the gateway."""

from __future__ import annotations

import importlib
import inspect

from hermes_gateway import hookimpl
from hermes_gateway._core import feature_parts
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.plugins import BUILTIN_FEATURE_HOOKS, BUILTIN_PLUGINS, implemented_hooks, make_plugins
from hermes_gateway._core.tools import collect_tools


def test_no_built_in_plugin_asks_for_the_gateway():
    for name in BUILTIN_PLUGINS:
        module = importlib.import_module(name)
        for hook in implemented_hooks(module):
            arguments = inspect.signature(getattr(module, hook)).parameters
            assert "gateway" not in arguments, f"{name}.{hook} takes the gateway"


def test_the_private_hooks_plugins_allow_are_those_feature_parts_specifies():
    specified = {name for name, value in vars(feature_parts).items()
                 if callable(value) and hasattr(value, "hermes_gateway_spec")}
    assert specified == set(BUILTIN_FEATURE_HOOKS)
    features = {hook for name in BUILTIN_PLUGINS for hook in implemented_hooks(importlib.import_module(name))
                if hook in BUILTIN_FEATURE_HOOKS}
    assert features == set(BUILTIN_FEATURE_HOOKS)  # the API server, console and hooks use all three


def test_a_third_party_plugin_cannot_implement_the_private_feature_hooks():
    class Intruder:
        __name__ = "intruder"

        @hookimpl
        def register_feature_routes(self, app, parts):  # noqa: ANN001
            raise AssertionError("never called")

    loaded = make_plugins(builtins=(), load_entry_points=False, extra=[Intruder()])
    assert len(loaded.problems) == 1
    assert "unknown hook(s) register_feature_routes" in loaded.problems[0].message


def test_reminders_register_their_tool_only_when_the_config_turns_them_on():
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.reminders",), load_entry_points=False)
    on = parse_config({"tools": {"reminders": True}}, source="(test)")
    off = parse_config({}, source="(test)")
    assert [tool.name for tool in collect_tools(plugins, on)] == ["remind"]
    assert collect_tools(plugins, off) == []
    assert collect_tools(plugins) == []  # listed without a config: nothing a setting turns on
