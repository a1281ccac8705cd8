"""Running the model's tool calls: whatever goes wrong becomes text the model can read.

An unknown tool, arguments that are not a JSON object, or a tool that
raises all produce a result string starting with ``Error:``; the turn goes
on and the model decides what to tell the person. Sync tools run in a
worker thread so the event loop keeps streaming other replies.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any, Mapping

from ..tools import Tool
from .results import ToolCall

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 50_000
SUMMARY_CHARS = 200


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    result: str
    ok: bool

    @property
    def summary(self) -> str:
        text = " ".join(self.result.split())
        return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"

    def as_message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call.call_id, "content": self.result}


async def run_tool(tools: Mapping[str, Tool], call: ToolCall, timeout: float | None = None) -> ToolOutcome:
    """Run one call and describe the result (or the failure) as text.

    A tool still running after ``timeout`` seconds is abandoned (an async one
    is cancelled; a thread cannot be, so it finishes unobserved).
    """
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolOutcome(call, f"Error: unknown tool {call.name!r}. Available tools: {known}.", False)
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        return ToolOutcome(call, f"Error: the arguments for {call.name} are not valid JSON ({exc.msg}); "
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
        text = _as_text(value)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        return ToolOutcome(call, f"Error: {call.name} did not finish within {timeout:g} seconds.", False)
    except Exception as exc:
        log.info("tool %s raised %s: %s", call.name, type(exc).__name__, exc)
        return ToolOutcome(call, f"Error: {call.name} failed: {type(exc).__name__}: {_safe_str(exc)}", False)
    return ToolOutcome(call, text, True)


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
