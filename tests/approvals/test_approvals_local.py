"""The API server's and the terminal's approvers: a setting, and a y/n typed at the prompt."""

from __future__ import annotations

import asyncio

from hermes_gateway._core.approvals.local import api_approver, terminal_approver
from hermes_gateway._core.config import parse_config

REQUIRE = {"tools": {"approval": {"require": ["shell_*"], "timeout": 1}}}


async def test_the_api_denies_by_default_and_allows_when_told():
    assert api_approver(parse_config({}, env={})) is None  # nothing required: nothing asked
    deny = api_approver(parse_config(REQUIRE, env={}))
    assert deny is not None and not await deny("shell_run", "{}") and await deny("qr_code", "{}")
    allow = api_approver(parse_config({**REQUIRE, "api_server": {"approvals": "allow"}}, env={}))
    assert allow is not None and await allow("shell_run", "{}")


async def test_the_terminal_runs_the_tool_only_on_yes():
    questions: list[str] = []

    def typed(answer: str):
        async def ask(question: str) -> str:
            questions.append(question)
            return answer
        return ask

    config = parse_config(REQUIRE, env={})
    assert await terminal_approver(config, typed("y"))("shell_run", '{"cmd": "ls"}')
    assert not await terminal_approver(config, typed(""))("shell_run", "{}")
    assert await terminal_approver(config, typed("n"))("qr_code", "{}")  # not required: not asked
    assert questions == ['Run the tool shell_run {"cmd": "ls"}? [y/N] ', "Run the tool shell_run {}? [y/N] "]


async def test_no_answer_at_the_terminal_in_time_is_a_no():
    async def never(question: str) -> str:
        await asyncio.sleep(10)
        return "y"
    assert not await terminal_approver(parse_config(REQUIRE, env={}), never)("shell_run", "{}")
