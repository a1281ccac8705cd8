"""The gateway's tools as one live list: fixed ones (built-in, plugins) plus those that come and go (MCP servers).

An MCP server's tools vanish while it is down and come back after its
restart, so an agent cannot copy the tool list once when it is built. A
:class:`ToolBox` is a ``Sequence[Tool]`` that reads its sources each time
their ``version`` changes; an agent given one asks it for the current
``snapshot()`` before each model request (:class:`~hermes_gateway._core.agent.AIAgent`).
Code that only iterates it (``[t for t in gateway.tools]``) gets the tools of
that moment, as before.

A source is anything with ``version`` (an int that changes whenever its tools
change) and ``tools()`` (the tools it offers now).
"""

from __future__ import annotations

import logging
from typing import Callable, Iterator, Protocol, Sequence, overload

from .tools import Tool

log = logging.getLogger(__name__)

__all__ = ["ToolBox", "ToolSource"]


class ToolSource(Protocol):
    """Tools that change at run time (one MCP server, all of them)."""

    @property
    def version(self) -> int: ...

    def tools(self) -> Sequence[Tool]: ...


class ToolBox(Sequence[Tool]):
    """Fixed tools first, then each source's, the first tool of a name winning; optionally filtered.

    ``where(predicate)`` is a live view with only the tools the predicate
    keeps (a chat's ``tools: {allow, deny}``), sharing the same sources.
    """

    def __init__(self, fixed: Sequence[Tool] = (), sources: Sequence[ToolSource] = (),
                 keep: Callable[[Tool], bool] | None = None) -> None:
        self._fixed = tuple(fixed)
        self._sources = list(sources)
        self._keep = keep
        self._seen: tuple[int, ...] | None = None
        self._snapshot: tuple[Tool, ...] = ()

    def add_source(self, source: ToolSource) -> None:
        """Offer ``source``'s tools too (views made by :meth:`where` see it as well)."""
        self._sources.append(source)
        self._seen = None

    @property
    def version(self) -> tuple[int, ...]:
        """Changes whenever any source's tools change (compare with ``!=``)."""
        return (len(self._sources), *(source.version for source in self._sources))

    def snapshot(self) -> tuple[Tool, ...]:
        """The tools offered now (recomputed only when a source changed)."""
        version = self.version
        if version != self._seen:
            self._snapshot = self._compute()
            self._seen = version
        return self._snapshot

    def _compute(self) -> tuple[Tool, ...]:
        found: dict[str, Tool] = {}
        for tool in self._fixed:
            found.setdefault(tool.name, tool)
        for source in self._sources:
            for tool in source.tools():
                if tool.name in found:
                    log.debug("tool %s is offered twice; the first one is kept", tool.name)
                    continue
                found[tool.name] = tool
        tools = tuple(found.values())
        return tools if self._keep is None else tuple(tool for tool in tools if self._keep(tool))

    def where(self, keep: Callable[[Tool], bool]) -> "ToolBox":
        """A live view holding only the tools ``keep`` accepts."""
        outer = self._keep
        view = ToolBox(self._fixed, (), keep if outer is None else (lambda tool: outer(tool) and keep(tool)))
        view._sources = self._sources  # shared: a source added later shows in every view
        return view

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.snapshot())

    def __len__(self) -> int:
        return len(self.snapshot())

    @overload
    def __getitem__(self, index: int) -> Tool: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Tool]: ...

    def __getitem__(self, index: int | slice) -> Tool | Sequence[Tool]:
        return self.snapshot()[index]

    def __repr__(self) -> str:
        return f"ToolBox({[tool.name for tool in self.snapshot()]!r})"
