"""``tools.approval``: which tools need a person's yes before they run, for how long we wait, and whose yes counts.

A name in ``require`` is a tool name or an ``fnmatch`` glob (``shell_*``,
``files__*`` for an MCP server's tools). ``who``: ``requester`` (the person
whose message started the turn) or ``admin`` (anyone in ``access.admins``).
A timeout counts as a deny.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

WHO = ("requester", "admin")
#: ``api_server.approvals``: what an API client's turn does with a tool that needs approval.
API_APPROVALS = ("deny", "allow")


@dataclass(frozen=True)
class ApprovalPolicy:
    """``tools.approval``; the default requires nothing."""

    require: tuple[str, ...] = ()
    timeout: float = 120.0
    who: str = "requester"

    def needs(self, tool_name: str) -> bool:
        """Whether ``tool_name`` waits for a person's yes."""
        return any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.require)


@dataclass(frozen=True)
class ToolsConfig:
    """``tools.approval`` (``tools.reminders`` beside it is read by :mod:`.settings.outbound`)."""

    approval: ApprovalPolicy = ApprovalPolicy()


def parse_tools(p: Any, value: Any) -> ToolsConfig:
    """Validate ``tools:`` with the config parser ``p`` (one-line errors naming file and key)."""
    section = p.section(value, "tools", ("approval", "reminders"))  # tools.reminders: the outbound package's
    approval = p.section(section.get("approval"), "tools.approval", ("require", "timeout", "who"))
    d = ApprovalPolicy()
    require = p.get(approval, "tools.approval", "require", "strlist", d.require)
    for i, pattern in enumerate(require):
        if not pattern.strip():
            raise p.fail(f"tools.approval.require[{i}]", "a tool name or glob, got an empty string")
    return ToolsConfig(approval=ApprovalPolicy(
        require=tuple(require),
        timeout=p.get(approval, "tools.approval", "timeout", "number", d.timeout, minimum=1, maximum=86_400),
        who=p.get(approval, "tools.approval", "who", "str", d.who, choices=WHO)))
