"""Approvers where there is no chat to put buttons in: the API server (a setting) and the terminal (y/n).

An API client cannot be asked mid-request, so ``api_server.approvals``
decides for every tool under ``tools.approval.require``: ``deny`` (the
default: the model reads "denied by the user") or ``allow``. The terminal
asks the person at the keyboard; anything but y/yes is a no, and so is no
answer within ``tools.approval.timeout``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from .chat import Approver, shorten_arguments


def api_approver(config: Any) -> Approver | None:
    """The approver of an API turn; None when nothing requires approval."""
    policy = config.tools.approval
    if not policy.require:
        return None
    allow = config.api_server.approvals == "allow"

    async def approve(tool: str, arguments: str) -> bool:
        return allow or not policy.needs(tool)
    return approve


def terminal_approver(config: Any, ask: Callable[[str], Awaitable[str]]) -> Approver | None:
    """The approver of a terminal turn: ``ask(question)`` returns what the person typed."""
    policy = config.tools.approval
    if not policy.require:
        return None

    async def approve(tool: str, arguments: str) -> bool:
        if not policy.needs(tool):
            return True
        question = f"Run the tool {tool} {shorten_arguments(arguments)}? [y/N] "
        try:
            answer = await asyncio.wait_for(ask(question), policy.timeout)
        except TimeoutError:
            return False
        return answer.strip().lower() in ("y", "yes")
    return approve
