"""One MCP server's life, in its own task: connect, list its tools, watch it, restart it with backoff.

While the server is up its tools (those ``tools: {allow, deny}`` lets
through) are offered as ``SERVER__TOOL``; when it fails to start, dies or
stops answering pings, that is one log line, its tools disappear, and it is
tried again after 1, 2, 4 ... up to 60 seconds. Coming back is one line too.
Nothing else in the gateway waits for it or fails with it.

A call runs on the connection the supervisor keeps; it is bounded by the
server's ``timeout``, and a call that times out or finds the server gone
raises, which the agent's tool runner turns into an ``Error: ...`` result
for the model.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Mapping, TextIO

from ..secrets import scrub
from ..tools import EMPTY_SCHEMA, Tool
from .names import tool_name
from .output import StderrPipe, watch_stdout
from .results import McpToolError, to_tool_result
from ..settings.mcp import McpServerSettings

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0     # start, handshake and tool listing; longer is a hung server
PING_INTERVAL = 5.0        # how soon a dead or hung server is noticed between calls (a ping)
PING_TIMEOUT = 10.0
#: The tool list is fetched again when the server says it changed (notifications/tools/list_changed), else at
#: most this often: a server of 20,000 tools listed every 5 s stalled the gateway ~2 s each time.
LIST_INTERVAL = 60.0
#: Stopping a server ends within this many seconds: the SDK closes stdin, waits, then SIGTERM, SIGKILL.
STOP_TIMEOUT = 4.5
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 60.0
STABLE_AFTER = 60.0        # up this long: the next failure starts the backoff from the beginning
MAX_REASON = 200

#: A server's states, as ``hermes-gateway tools`` shows them.
STARTING, UP, DOWN, STOPPED = "starting", "up", "down", "stopped"


class McpToolTimeout(McpToolError):
    """The server did not answer a call within its ``timeout``."""


@dataclass(frozen=True)
class ListedTool:
    """A tool the server listed: its own name, the model's name for it, and whether the config offers it."""

    server_name: str
    name: str
    offered: bool


class McpServer:
    """The supervisor of one configured server; a tool source (``version``, ``tools()``) for the agent."""

    def __init__(self, settings: McpServerSettings, *, errlog: TextIO | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, ping_interval: float = PING_INTERVAL,
                 ping_timeout: float = PING_TIMEOUT, first_backoff: float = FIRST_BACKOFF,
                 max_backoff: float = MAX_BACKOFF, list_interval: float = LIST_INTERVAL) -> None:
        self.settings = settings
        self.errlog = errlog
        self.connect_timeout = connect_timeout
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.list_interval = list_interval
        self.pings = 0                   # health checks answered (tests wait for them)
        self._tools_changed = asyncio.Event()
        self.state = STOPPED
        self.reason: str | None = None   # why it is down
        self.listed: tuple[ListedTool, ...] = ()  # as of the last successful listing
        self.version = 0
        self._tools: tuple[Tool, ...] = ()
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._broken = asyncio.Event()
        self._attempted = asyncio.Event()
        self.restarts = 0

    @property
    def name(self) -> str:
        return self.settings.name

    def tools(self) -> tuple[Tool, ...]:
        """The tools offered now: none while the server is not up."""
        return self._tools

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor task (idempotent while it runs)."""
        if self._task is not None and not self._task.done():
            return
        self._stop = asyncio.Event()
        self._broken = asyncio.Event()
        self._attempted = asyncio.Event()
        self.state = STARTING
        self._task = asyncio.create_task(self._supervise(), name=f"mcp server {self.name}")

    async def wait_started(self, timeout: float) -> None:
        """Until the first connection attempt has succeeded or failed, at most ``timeout`` seconds."""
        try:
            await asyncio.wait_for(self._attempted.wait(), timeout)
        except TimeoutError:
            pass

    async def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Close the connection (a stdio server's process ends); after ``timeout`` seconds the supervisor is
        cancelled and not waited for: the SDK's own shutdown (stdin closed, SIGTERM, SIGKILL, each bounded)
        finishes on its own, and the gateway's stop stays within its grace + 5 s."""
        task, self._task = self._task, None
        self._stop.set()
        if task is not None and not task.done():
            done, _ = await asyncio.wait({task}, timeout=timeout)
            if not done:
                task.cancel()
                log.warning("MCP server %s did not stop within %gs; its process is being killed", self.name,
                            timeout)
        self._set_tools(())
        self.state = STOPPED

    # -- the supervisor ------------------------------------------------------------------------------------

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.first_backoff
        reported_down = False
        bad_stdout = watch_stdout(self.name)  # the SDK's reader tasks start in this task's context
        while not self._stop.is_set():
            began = loop.time()
            reason = None
            try:
                await self._connected(was_down=reported_down)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # ExceptionGroup from the SDK's task groups, OSError, timeouts ...
                reason = describe(exc, self.ping_timeout if self.state == UP else self.connect_timeout)
            finally:
                bad_stdout.flush()
            self._client = None
            came_up = self.state == UP
            self._set_tools(())
            self._attempted.set()
            if self._stop.is_set():
                break
            reason = reason or "the connection closed"
            self.state, self.reason = DOWN, reason
            if came_up and loop.time() - began >= STABLE_AFTER:
                delay = self.first_backoff
            if came_up or not reported_down:
                what = "stopped working" if came_up else "failed to start"
                log.warning("MCP server %s %s: %s; its tools are unavailable until it is back (retrying in %gs)",
                            self.name, what, reason, delay)
                reported_down = True
            else:
                log.debug("MCP server %s is still down: %s (retrying in %gs)", self.name, reason, delay)
            try:
                await asyncio.wait_for(self._stop.wait(), delay)
            except TimeoutError:
                pass
            delay = min(delay * 2, self.max_backoff)
            self.restarts += 1

    async def _connected(self, *, was_down: bool) -> None:
        """Connect, list, then watch until stopped (returns) or broken (raises)."""
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(self.connect_timeout):
                client = await stack.enter_async_context(self._client_for(stack))
                listed = await _list_tools(client)
            self._offer(client, listed)
            self.state, self.reason = UP, None
            self._attempted.set()
            count = len(self._tools)
            if was_down:
                log.warning("MCP server %s is back: %d tool%s", self.name, count, "" if count == 1 else "s")
            else:
                log.info("MCP server %s is up: %d tool%s", self.name, count, "" if count == 1 else "s")
            await self._watch(client)

    async def _watch(self, client: Any) -> None:
        loop = asyncio.get_running_loop()
        listed_at = loop.time()
        while True:
            waits = [asyncio.ensure_future(event.wait()) for event in (self._stop, self._broken, self._tools_changed)]
            try:
                await asyncio.wait(waits, timeout=self.ping_interval, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
            if self._stop.is_set():
                return
            if self._broken.is_set():
                raise ConnectionError("the connection broke during a call")
            async with asyncio.timeout(self.ping_timeout):
                if self._tools_changed.is_set() or loop.time() - listed_at >= self.list_interval:
                    self._tools_changed.clear()
                    listed = await _list_tools(client, cache_mode="bypass")
                    listed_at = loop.time()
                    if tuple(item.name for item in listed) != tuple(entry.server_name for entry in self.listed):
                        self._offer(client, listed)
                else:
                    await _alive(client)
            self.pings += 1

    async def _on_message(self, message: Any) -> None:
        """The SDK's message handler: ``notifications/tools/list_changed`` has the list fetched again."""
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self._tools_changed.set()

    def _client_for(self, stack: AsyncExitStack) -> Any:
        """The SDK's ``Client`` for this server's transport (imported here: the SDK loads only when used)."""
        from mcp import Client, StdioServerParameters

        s = self.settings
        if s.transport == "stdio":
            params = StdioServerParameters(command=s.command or "", args=list(s.args), env=dict(s.env) or None,
                                           cwd=s.cwd)
            from mcp.client.stdio import stdio_client

            if self.errlog is not None:
                errlog = self.errlog
            else:  # into the log, cut and rate-limited (output.py), not straight into ours
                pipe = StderrPipe(self.name)
                pipe.start()
                stack.push_async_callback(pipe.close)
                errlog = pipe.errlog
            return Client(stdio_client(params, errlog=errlog), message_handler=self._on_message)
        headers = dict(s.headers) or None
        if s.transport == "sse":
            from mcp.client.sse import sse_client

            return Client(sse_client(s.url or "", headers=headers), mode="legacy", message_handler=self._on_message)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = create_mcp_http_client(headers=headers)
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(s.url or "", http_client=http), message_handler=self._on_message)

    def _offer(self, client: Any, listed: list[Any]) -> None:
        self._client = client
        tools: list[Tool] = []
        entries: list[ListedTool] = []
        for item in listed:
            offered = self.settings.offers(item.name)
            name = tool_name(self.name, item.name)
            entries.append(ListedTool(item.name, name, offered))
            if not offered:
                continue
            try:
                tools.append(Tool(name=name, description=item.description or item.title or item.name,
                                  function=self._caller(item.name, name), parameters=_schema(item.input_schema)))
            except (TypeError, ValueError) as exc:
                log.warning("MCP server %s: tool %s is left out: %s", self.name, item.name, exc)
        self.listed = tuple(entries)
        self._set_tools(tuple(tools))

    def _set_tools(self, tools: tuple[Tool, ...]) -> None:
        if tools != self._tools:
            self._tools = tools
            self.version += 1

    def _caller(self, server_name: str, name: str) -> Any:
        async def call(**arguments: Any) -> Any:
            return await self.call(server_name, arguments, name)

        call.__name__ = name
        return call

    async def call(self, tool: str, arguments: Mapping[str, Any], shown_as: str | None = None) -> Any:
        """Call ``tool`` (the server's name for it) with ``arguments``; a ToolResult, or McpToolError."""
        client = self._client
        if client is None or self.state != UP:
            raise McpToolError(f"the MCP server {self.name} is not running ({self.reason or self.state})")
        timeout = self.settings.timeout
        try:
            async with asyncio.timeout(timeout):
                result = await client.call_tool(tool, dict(arguments))
        except TimeoutError:
            raise McpToolTimeout(f"the MCP server {self.name} did not answer within {timeout:g} seconds") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if _is_connection_error(exc):
                self._broken.set()
                raise McpToolError(f"the connection to the MCP server {self.name} was lost") from None
            raise McpToolError(scrub(_first_line(exc))) from None
        return to_tool_result(result)


async def _alive(client: Any) -> None:
    """A request the server must answer: a hung or dead one raises (the caller bounds the wait).

    ``ping`` is gone from the 2026 protocol, but any answer proves the server reads and writes: a server that
    no longer knows ping answers "method not found", which counts as alive as much as an empty result does.
    """
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    try:
        await client.session.send_ping()
    except MCPError as exc:
        if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):  # said by the SDK, not by the server
            raise ConnectionError(exc.message) from None


async def _list_tools(client: Any, cache_mode: str = "use") -> list[Any]:
    """Every tool the server lists, page after page."""
    tools: list[Any] = []
    cursor = None
    for _ in range(100):  # a server that pages forever is not one to wait for
        page = await client.list_tools(cursor=cursor, cache_mode=cache_mode)
        tools.extend(page.tools)
        cursor = getattr(page, "next_cursor", None)
        if not cursor:
            break
    return tools


def _schema(schema: Any) -> dict[str, Any]:
    """The server's input schema, as a JSON schema of type object (what tool APIs require)."""
    if not isinstance(schema, Mapping) or not schema:
        return dict(EMPTY_SCHEMA)
    out = dict(schema)
    out.setdefault("type", "object")
    if out["type"] == "object":
        out.setdefault("properties", {})
    return out


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _is_connection_error(exc: BaseException) -> bool:
    import anyio

    kinds = (ConnectionError, OSError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError,
             anyio.EndOfStream)
    return any(isinstance(leaf, kinds) for leaf in _leaves(exc))


def describe(exc: BaseException, waited: float) -> str:
    """Why a connection failed, in one short line without secrets (``waited``: the timeout that applied)."""
    leaf = _leaves(exc)[0]
    if isinstance(leaf, TimeoutError):
        return f"it did not answer within {waited:g}s"
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename or leaf}"
    text = _first_line(leaf)
    return scrub(text)[:MAX_REASON]


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:
        text = ""
    kind = type(exc).__name__
    return f"{kind}: {text}" if text else kind
