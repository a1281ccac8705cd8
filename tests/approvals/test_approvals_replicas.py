"""Approval across replicas: the answer may reach a replica other than the one whose reply waits.

Two gateways on one reference platform and one real redis-server; the
person's ``/allow`` (or a double answer, one per replica) lands wherever
the platform sends it, and the tool still runs exactly once, on the replica
that asked.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

from hermes_gateway import Incoming, RateBudget, Tool, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway._core.store import MemoryStore
from hermes_gateway.testing import ReferencePlatform

ASKER, OTHER = "7", "8"
_ids = itertools.count(1)


class ShellTool:
    def __init__(self) -> None:
        self.runs: list[str] = []

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Tool("shell_run", "Run a shell command", self.run,
                      {"type": "object", "properties": {"cmd": {"type": "string"}}}))

    def run(self, cmd: str = "") -> str:
        self.runs.append(cmd)
        return f"ran {cmd}"


def replica(ref: ReferencePlatform, tool: ShellTool, redis_url: str, timeout: float = 30) -> Gateway:
    data = {"model": {"demo": {"tokens_per_second": 500}}, "platforms": {"reference": {"enabled": True}},
            "coordination": {"url": redis_url}, "tools": {"approval": {"require": ["shell_*"], "timeout": timeout}}}
    gateway = Gateway(parse_config(data, env={}), make_plugins(builtins=(), load_entry_points=False,
                                                               extra=[ref, tool]))
    gateway.store = MemoryStore()
    return gateway


def deliver(gateway: Gateway, text: str, user: str) -> "asyncio.Future[Any]":
    n = next(_ids)
    return gateway.receive(Incoming("reference", "42", text, sender_id=user, update_id=f"r{n}", message_id=f"r{n}",
                                    chat_kind="private", mentioned=True))


async def question_id(ref: ReferencePlatform) -> str:
    for _ in range(500):
        for line in ref.chat("42").screen:
            found = re.search(r"/allow (\w+)", line)
            if found:
                return found.group(1)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no question on screen: {ref.chat('42').screen}")


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=200, burst=50)})


async def test_an_answer_on_the_other_replica_runs_the_tool_once_where_it_was_asked(redis_url):
    ref, tool = reference(), ShellTool()
    async with replica(ref, tool, redis_url) as a, replica(ref, tool, redis_url) as b:
        reply = deliver(a, 'tool: shell_run {"cmd": "ls"}', ASKER)
        qid = await question_id(ref)
        await deliver(b, f"/allow {qid}", OTHER)  # someone else, on the other replica: nothing happens
        assert ref.chat("42").screen[-1] == "⛔ Only the person who asked can answer this."
        await asyncio.gather(deliver(b, f"/allow {qid}", ASKER), deliver(a, f"/allow {qid}", ASKER))
        await asyncio.wait_for(reply, 20)
        screen = ref.chat("42").screen
        assert screen.count("✅ Approved.") == 1 and screen.count("This question is no longer open.") == 1
        assert any("ran ls" in line for line in screen)
    assert tool.runs == ["ls"]


async def test_a_deny_on_the_other_replica_and_a_late_answer_after_a_timeout_never_run_it(redis_url):
    ref, tool = reference(), ShellTool()
    async with replica(ref, tool, redis_url, timeout=1) as a, replica(ref, tool, redis_url, timeout=1) as b:
        reply = deliver(a, 'tool: shell_run {"cmd": "rm"}', ASKER)
        qid = await question_id(ref)
        await deliver(b, f"/deny {qid}", ASKER)
        await asyncio.wait_for(reply, 20)
        assert any("denied by the user" in line for line in ref.chat("42").screen)
        late = deliver(a, 'tool: shell_run {"cmd": "rm -r"}', ASKER)
        await asyncio.wait_for(late, 20)  # nobody answers: a deny after 1 s
        second = re.findall(r"/allow (\w+)", "\n".join(ref.chat("42").screen))[-1]
        await deliver(b, f"/allow {second}", ASKER)
        assert ref.chat("42").screen[-1] == "This question is no longer open."
    assert tool.runs == []
