"""The live tool list: fixed tools plus sources whose tools come and go; the agent offers what is there now."""

from __future__ import annotations

from hermes_gateway._core.agent import AIAgent
from hermes_gateway._core.toolbox import ToolBox
from hermes_gateway._core.tools import Tool


def tool(name: str) -> Tool:
    return Tool(name=name, description=name, function=lambda: name)


class Source:
    def __init__(self) -> None:
        self.version = 0
        self._tools: list[Tool] = []

    def tools(self) -> list[Tool]:
        return self._tools

    def set(self, *names: str) -> None:
        self._tools = [tool(n) for n in names]
        self.version += 1


def test_a_source_s_tools_appear_and_vanish_and_a_fixed_name_wins():
    source = Source()
    box = ToolBox([tool("calc")], [source])
    assert [t.name for t in box] == ["calc"]
    source.set("files__read", "calc")
    assert [t.name for t in box] == ["calc", "files__read"]
    source.set()
    assert len(box) == 1


def test_a_filtered_view_stays_live_and_sees_a_source_added_later():
    box = ToolBox([tool("calc"), tool("qr")])
    view = box.where(lambda t: t.name != "qr")
    source = Source()
    box.add_source(source)
    source.set("files__read")
    assert [t.name for t in view] == ["calc", "files__read"]


def test_the_agent_offers_the_tools_of_the_moment():
    source = Source()
    agent = AIAgent(tools=ToolBox([tool("calc")], [source]))
    assert list(agent.tools) == ["calc"]
    source.set("files__read")
    assert list(agent.tools) == ["calc", "files__read"]
    assert [t["function"]["name"] for t in agent._chat_tools] == ["calc", "files__read"]
    source.set()
    assert [t["name"] for t in agent._responses_tools] == ["calc"]
