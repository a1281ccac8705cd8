"""The plugin layer: third-party plugins load, broken ones are reported by name and skipped."""

from __future__ import annotations

import asyncio
import sys

import pytest

import hermes_gateway
from fake_dist import install_dist
from hermes_gateway import StreamSettings, make_plugins
from hermes_gateway.testing import PlatformRunner, run_virtual

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "plugins" / "notebook"))
import hermes_notebook as notebook_platform  # noqa: E402


def test_a_third_party_module_registers_a_platform_and_receives_a_stream():
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[notebook_platform])
    assert plugins.problems == []
    assert plugins.platform("notebook").platform.max_message_length == 64
    reply = "A plugin author writes four small methods and gets pacing, splitting and retries for free."
    runner = PlatformRunner(notebook_platform, {"title": "mine"})
    notebook = runner.build()

    async def main():
        session = runner.delivery().session("notebook", "n1", settings=StreamSettings(enabled=True, min_tokens=1,
                                                                                      edit_interval=0.5))
        for word in reply.split(" "):
            session.feed(word + " ")
            await asyncio.sleep(0.2)
        return await session.finish()

    report = run_virtual(main())
    assert report.delivered
    page = notebook.pages["n1"]
    assert len(page) == 2 and all(len(m) <= 64 for m in page)
    assert "".join(page) == reply


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_entry_point_plugins_are_discovered(site, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "demo_chat")  # the suite loads no installed plugin unless asked
    install_dist(site, "hg_demo_plugin", """
        import hermes_gateway
        @hermes_gateway.hookimpl
        def register_platforms(register):
            register(hermes_gateway.Platform(name="demo_chat"))
        @hermes_gateway.hookimpl
        def on_stream_end(stream, message, text):
            return message
    """, "demo_chat = hg_demo_plugin")
    plugins = make_plugins(builtins=())
    assert "demo_chat" in plugins.platforms()
    assert plugins.platforms()["demo_chat"].origin == "entry point of hg_demo_plugin"


def test_a_plugin_that_fails_to_import_is_reported_and_the_rest_still_load(site, monkeypatch):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "broken")
    install_dist(site, "hg_broken_plugin", "raise RuntimeError('missing SDK token module')\n",
                "broken = hg_broken_plugin")
    plugins = make_plugins(extra=[notebook_platform])
    assert [p.plugin for p in plugins.problems] == ["broken"]
    assert "failed to import hg_broken_plugin (RuntimeError: missing SDK token module)" in str(plugins.problems[0])
    assert {"notebook", "reference"} <= set(plugins.platforms())


def test_a_plugin_implementing_an_unknown_hook_is_reported_by_name():
    class Typo:
        __name__ = "typo_plugin"

        @hermes_gateway.hookimpl
        def on_stream_finish(self, stream, message, text):  # should be on_stream_end
            return None

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[Typo(), notebook_platform])
    assert len(plugins.problems) == 1
    message = str(plugins.problems[0])
    assert "typo_plugin" in message and "on_stream_finish" in message and "on_stream_end" in message
    assert "notebook" in plugins.platforms()


def test_a_hook_with_wrong_argument_names_is_reported():
    class Wrong:
        __name__ = "wrong_args"

        @hermes_gateway.hookimpl
        def on_delta(self, stream, msg, text):
            return None

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[Wrong()])
    assert plugins.problems and plugins.problems[0].plugin == "wrong_args"


def test_a_register_platforms_that_raises_does_not_stop_the_others():
    class Exploding:
        __name__ = "exploding"

        @hermes_gateway.hookimpl
        def register_platforms(self, register):
            raise ValueError("no token configured")

        @hermes_gateway.hookimpl
        def on_stream_end(self, stream, message, text):
            return message

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[Exploding(), notebook_platform])
    assert list(plugins.platforms()) == ["notebook"]
    assert "no token configured" in str(plugins.problems[0])


def test_asking_for_an_unknown_platform_names_the_known_ones():
    plugins = make_plugins(load_entry_points=False)
    with pytest.raises(KeyError, match="unknown platform 'nope' \\(known: reference, web\\)"):
        plugins.platform("nope")


def test_the_public_api_is_what_plugin_authors_are_told_to_use():
    for name in ("hookimpl", "Platform", "MessageRef", "RateLimited", "DeliveryError"):
        assert name in hermes_gateway.__all__ and hasattr(hermes_gateway, name)


def test_every_hook_is_documented_with_an_example():
    from hermes_gateway._core import hookspecs
    from hermes_gateway._core.plugins import _spec_names

    guide = (__import__("pathlib").Path(__file__).parents[1] / "docs" / "plugins.md").read_text()
    for name in _spec_names():
        assert f"`{name}(" in guide, f"hook {name} is not documented"
        if name not in ("startup", "shutdown", "register_routes"):  # a feature's hooks, not a platform's
            assert f"def {name}(" in guide, f"hook {name} has no example"
        assert getattr(hookspecs, name).__doc__, f"hook {name} has no docstring"


# -- a plugin missing a stream hook its platform needs is refused at load ------------------------------------

def _platform_plugin(name: str, **hooks):
    class Plugin:
        __name__ = name

        @hermes_gateway.hookimpl
        def register_platforms(self, register):
            register(hermes_gateway.Platform(name=name, append_only=hooks.pop("append_only", False)))

    for hook in hooks:
        async def impl(stream, message=None, text=""):
            return message
        impl.__name__ = hook
        setattr(Plugin, hook, staticmethod(hermes_gateway.hookimpl(specname=hook)(impl)))
    return Plugin()


def test_a_plugin_with_previews_but_no_on_stream_end_is_refused_in_one_line_and_the_others_load():
    plugins = make_plugins(builtins=(), load_entry_points=False,
                           extra=[_platform_plugin("tailless", on_delta=True), notebook_platform])
    assert [str(p) for p in plugins.problems] == [
        "plugin 'tailless' skipped: registers a platform but does not implement on_stream_end "
        "(every platform shows each message's final text with it)"]
    assert list(plugins.platforms()) == ["notebook"]
    assert "tailless" not in [plugins.pm.get_name(p) for p in plugins.pm.get_plugins()]


def test_a_plugin_that_says_it_can_edit_without_on_delta_is_refused():
    plugins = make_plugins(builtins=(), load_entry_points=False,
                           extra=[_platform_plugin("editless", supports_edit=True, on_stream_end=True)])
    assert len(plugins.problems) == 1
    assert "'editless'" in str(plugins.problems[0]) and "on_delta" in str(plugins.problems[0])
    assert plugins.platforms() == {}


def test_an_append_only_platform_without_on_delta_is_refused():
    plugins = make_plugins(builtins=(), load_entry_points=False,
                           extra=[_platform_plugin("appender", on_stream_end=True, append_only=True)])
    assert len(plugins.problems) == 1
    message = str(plugins.problems[0])
    assert "'appender'" in message and "append_only" in message and "on_delta" in message
    assert plugins.platforms() == {}


def test_a_send_only_plugin_needs_only_on_stream_end():
    plugins = make_plugins(builtins=(), load_entry_points=False,
                           extra=[_platform_plugin("sender", on_stream_end=True)])
    assert plugins.problems == [] and "sender" in plugins.platforms()


def test_register_routes_receives_the_gateway_and_an_old_one_argument_impl_still_works():
    seen = []

    class New:
        @hermes_gateway.hookimpl
        def register_routes(self, app, gateway):
            seen.append(("new", app, gateway))

    class Old:
        @hermes_gateway.hookimpl
        def register_routes(self, app):
            seen.append(("old", app))

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[New(), Old()])
    assert plugins.problems == []
    plugins.pm.hook.register_routes(app="the app", gateway="the gateway")
    assert sorted(seen) == [("new", "the app", "the gateway"), ("old", "the app")]


def test_register_commands_is_a_hook_plugins_may_implement():
    class Commands:
        @hermes_gateway.hookimpl
        def register_commands(self, register):
            register("ping")

    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[Commands()])
    got = []
    plugins.pm.hook.register_commands(register=got.append)
    assert plugins.problems == [] and got == ["ping"]


def test_the_installed_plugins_are_loaded_once_and_shared():
    from hermes_gateway import installed_plugins
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.gateway import Gateway

    first = installed_plugins()
    assert installed_plugins() is first
    # the gateway's view of them (its config's accounts) shares the very plugin manager the commands use
    assert Gateway(parse_config({}, env={})).plugins.pm is first.pm, "the gateway uses the same plugins as the commands"
    assert "reference" in first.platforms()
