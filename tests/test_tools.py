"""The Tool type and collecting tools from plugins the way third parties register them."""

import asyncio
import types

import pytest

from hermes_gateway import Tool, hookimpl, make_plugins
from hermes_gateway._core.tools import collect_tools


def test_tool_validates_name_function_and_schema() -> None:
    with pytest.raises(ValueError, match="tool name"):
        Tool("bad name!", "", lambda: None)
    with pytest.raises(TypeError, match="callable"):
        Tool("ok", "", "not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="type 'object'"):
        Tool("ok", "", lambda: None, {"type": "string"})


def test_schemas_for_both_api_modes() -> None:
    tool = Tool("t", "does t", lambda: None, {"type": "object", "properties": {"a": {"type": "string"}}})
    assert tool.chat_schema() == {"type": "function", "function": {
        "name": "t", "description": "does t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    assert tool.responses_schema()["name"] == "t" and "function" not in tool.responses_schema()


def test_builtin_and_third_party_tools_are_collected_and_problems_reported() -> None:
    third = types.ModuleType("third_party_tools")

    @hookimpl
    def register_tools(register):
        register(Tool("weather", "the weather", lambda city="": "sunny"))
        register(Tool("calculate", "a clash with the built-in", lambda: 0))

    third.register_tools = register_tools
    broken = types.ModuleType("broken_tools")

    @hookimpl
    def register_tools_broken(register):
        register("not a tool")

    broken.register_tools = register_tools_broken
    plugins = make_plugins(load_entry_points=False, extra=[third, broken])
    names = [t.name for t in collect_tools(plugins)]
    assert names == ["current_time", "calculate", "qr_code", "weather"]
    messages = [str(p) for p in plugins.problems]
    assert any("'calculate' is already registered by 'hermes_gateway._core.builtin.tools'" in m for m in messages)
    assert any("broken_tools" in m and "register() takes a hermes_gateway.Tool" in m for m in messages)


def test_an_agent_without_tools_offers_those_of_the_installed_plugins(tmp_path, monkeypatch) -> None:
    """``AIAgent()`` in a script: the installed plugins' tools, which the plugin manager provides (the agent
    itself never imports it)."""
    from fake_dist import install_dist
    from hermes_gateway._core.agent import AIAgent
    from hermes_gateway._core.tools import installed_tools

    install_dist(tmp_path, "hg_shout_tool", """
        import hermes_gateway
        @hermes_gateway.hookimpl
        def register_tools(register):
            register(hermes_gateway.Tool("shout", "says it louder", lambda text: text.upper()))
    """, "shout = hg_shout_tool")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert {"current_time", "calculate", "qr_code"} <= {t.name for t in installed_tools()}
    assert "shout" not in {t.name for t in installed_tools()}, "not asked for: HERMES_LOAD_PLUGINS is empty"
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "shout")
    assert "shout" in {t.name for t in installed_tools()}
    agent = AIAgent()
    try:
        assert "shout" in agent.tools
    finally:
        asyncio.run(agent.aclose())
