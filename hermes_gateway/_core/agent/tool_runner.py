"""Running the model's tool calls: whatever goes wrong becomes text the model can read.

An unknown tool, arguments that are not a JSON object, or a tool that
raises all produce a result string starting with ``Error:``; the turn goes
on and the model decides what to tell the person. Sync tools run in a
worker thread so the event loop keeps streaming other replies.

A :class:`~hermes_gateway._core.tools.ToolResult` with media: each item is
admitted into the media directory here (bytes written, paths checked, in a
thread), the model's result text gets one stand-in line per item, and the
items ride along in the outcome to the turn's end (``TurnEnd.media``).
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ..media import Media
from ..media_dir import MediaDirectory
from ..tools import Tool, ToolResult
from .results import ToolCall

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 50_000
SUMMARY_CHARS = 200
#: What the model reads for a call a person did not approve (``tools.approval``).
DENIED = "Error: denied by the user; the tool was not run."
#: ``approver(tool_name, arguments_json) -> run it?``
Approver = Callable[[str, str], Awaitable[bool]]
MAX_MEDIA_PER_RESULT = 10   # a chat should not get a flood of attachments from one tool call


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    result: str
    ok: bool
    media: tuple[Media, ...] = ()

    @property
    def summary(self) -> str:
        text = " ".join(self.result.split())
        return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"

    def as_message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call.call_id, "content": self.result}


#: An unknown tool's error names at most this many tools (an MCP server may offer 20,000: 389 KB to the model).
MAX_SUGGESTIONS = 5


def unknown_tool(name: str, tools: Mapping[str, Tool]) -> str:
    """The model's answer for a name no tool has: every tool when there are few, else the closest few."""
    shown = repr(name[:100])
    if len(tools) <= MAX_SUGGESTIONS:
        return f"Error: unknown tool {shown}. Available tools: {', '.join(sorted(tools)) or 'none'}."
    close = difflib.get_close_matches(name[:100], list(tools), n=MAX_SUGGESTIONS, cutoff=0.5)
    what = f"Closest tool names: {', '.join(close)}" if close else "No tool has a similar name"
    return f"Error: unknown tool {shown}. {what} (of {len(tools)} tools)."


async def run_tool(tools: Mapping[str, Tool], call: ToolCall, timeout: float | None = None,
                   media_directory: MediaDirectory | None = None) -> ToolOutcome:
    """Run one call and describe the result (or the failure) as text, with its media admitted.

    A tool still running after ``timeout`` seconds is abandoned (an async one
    is cancelled; a thread cannot be, so it finishes unobserved).
    """
    tool = tools.get(call.name)
    if tool is None:
        return ToolOutcome(call, unknown_tool(call.name, tools), False)
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:  # a JSONDecodeError, or a plain ValueError (an integer over 4300 digits)
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return ToolOutcome(call, f"Error: the arguments for {call.name} are not valid JSON ({reason}); "
                                 f"send a JSON object matching its schema.", False)
    if not isinstance(arguments, dict):
        return ToolOutcome(call, f"Error: the arguments for {call.name} must be a JSON object, "
                                 f"got {type(arguments).__name__}.", False)
    try:
        async with asyncio.timeout(timeout):
            if inspect.iscoroutinefunction(tool.function):
                value = await tool.function(**arguments)
            else:
                value = await asyncio.to_thread(tool.function, **arguments)
                if inspect.isawaitable(value):
                    value = await value
        media: tuple[Media, ...] = ()
        if isinstance(value, ToolResult):
            media = await _admit(call.name, value.media, media_directory)
            value = "\n".join([value.text] * bool(value.text) + [item.stand_in() for item in media])
        text = _as_text(value)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return ToolOutcome(call, f"Error: {call.name} did not finish within {timeout:g} seconds.", False)
    except Exception as exc:
        log.info("tool %s raised %s: %s", call.name, type(exc).__name__, exc)
        return ToolOutcome(call, f"Error: {call.name} failed: {type(exc).__name__}: {_safe_str(exc)}", False)
    return ToolOutcome(call, text, True, media)


async def refusal(tools: Mapping[str, Tool], call: ToolCall, approver: Approver | None) -> ToolOutcome | None:
    """The outcome of a call a person did not approve (:data:`DENIED`); None when it may run.

    Only a known tool is asked about (an unknown one is reported by
    :func:`run_tool` without asking anyone). The wait for the answer is not
    part of the tool's own timeout; a no (a deny, a timeout, nobody to ask)
    means the tool never runs.
    """
    if approver is None or call.name not in tools:
        return None
    try:
        approved = await approver(call.name, call.arguments)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # nobody could be asked: the risky tool does not run
        log.warning("asking approval for %s failed: %s: %s", call.name, type(exc).__name__, exc)
        approved = False
    return None if approved else ToolOutcome(call, DENIED, False)


async def _admit(tool: str, items: Sequence[Media], directory: MediaDirectory | None) -> tuple[Media, ...]:
    """The items ready for delivery: bytes written into the media directory, paths checked (in a thread)."""
    items = tuple(items)
    if len(items) > MAX_MEDIA_PER_RESULT:
        log.warning("tool %s returned %d media items; the first %d are kept", tool, len(items), MAX_MEDIA_PER_RESULT)
        items = items[:MAX_MEDIA_PER_RESULT]
    if directory is None or not items:
        return items
    return tuple(await asyncio.to_thread(lambda: [directory.admit(item) for item in items]))


def _safe_str(exc: Exception) -> str:
    try:
        return str(exc)
    except Exception:
        return "(unprintable)"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[truncated: {len(text) - MAX_RESULT_CHARS} more characters]"
    return text
