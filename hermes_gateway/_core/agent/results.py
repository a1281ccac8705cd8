"""What one upstream call produced, shaped the same for streaming and non-streaming.

The tool loop only ever sees a :class:`ModelCall`, whichever API mode and
whichever path (stream, non-stream fallback) filled it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..events import ToolCallArguments, ToolCallStarted, UsageReport
from .limits import MAX_TOOL_ARGUMENT_CHARS, MAX_TOOL_CALLS, UpstreamTooLarge


@dataclass(slots=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str
    index: int = 0

    def as_message(self) -> dict[str, Any]:
        return {"id": self.call_id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(slots=True)
class _Slot:
    index: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


class ToolCallAccumulator:
    """Reassembles streamed tool calls by ``index``: id and name once, arguments in pieces.

    Several calls may be interleaved. ``ToolCallStarted`` is produced the
    moment a call's name is known, before its arguments are complete.
    """

    __slots__ = ("_slots", "_argument_chars")

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}
        self._argument_chars = 0

    def slot(self, key: int, *, dense: bool = False) -> _Slot:
        """The slot for ``key``, made on first sight; calls come out ordered by key.

        ``key`` is the Chat Completions ``index`` (reported as is) or the
        Responses ``output_index`` (``dense``: reported as 0, 1, 2… among the
        function calls, since message items share the numbering).
        """
        slot = self._slots.get(key)
        if slot is None:
            if len(self._slots) >= MAX_TOOL_CALLS:
                raise UpstreamTooLarge(f"the upstream sent more than {MAX_TOOL_CALLS} tool calls in one answer")
            slot = self._slots[key] = _Slot(len(self._slots) if dense else key)
        return slot

    def add_arguments(self, slot: _Slot, text: str) -> None:
        """A piece of ``slot``'s arguments, within :data:`~.limits.MAX_TOOL_ARGUMENT_CHARS` for the answer."""
        self._argument_chars += len(text)
        if self._argument_chars > MAX_TOOL_ARGUMENT_CHARS:
            raise UpstreamTooLarge(f"the upstream sent tool call arguments over {MAX_TOOL_ARGUMENT_CHARS} characters")
        slot.arguments.append(text)

    def add_chat_deltas(self, deltas: Sequence[Any]) -> list[ToolCallStarted]:
        started: list[ToolCallStarted] = []
        for delta in deltas:
            key = delta.index if delta.index is not None else len(self._slots)
            slot = self.slot(key)
            if delta.id and not slot.call_id:
                slot.call_id = delta.id
            function = delta.function
            if function is not None:
                if function.name and not slot.name:
                    slot.name = function.name
                if function.arguments:
                    self.add_arguments(slot, function.arguments)
            if slot.name and not slot.announced:
                started.append(self.announce(slot))
        return started

    def add_chat_delta_dicts(self, deltas: Sequence[dict[str, Any]]) -> list[ToolCallStarted | ToolCallArguments]:
        """:meth:`add_chat_deltas` for deltas as parsed JSON (the streaming path reads no SDK models), with each
        piece of arguments as a :class:`ToolCallArguments` too (after its call's start), as it arrived."""
        started: list[ToolCallStarted | ToolCallArguments] = []
        for delta in deltas:
            key = delta.get("index")
            if key is None:
                key = len(self._slots)
            elif type(key) is not int:
                raise TypeError(f"tool call index {key!r} is not an integer")
            slot = self.slot(key)
            call_id = delta.get("id")
            if call_id and not slot.call_id:
                slot.call_id = text_field(call_id, "tool call id")
            function = delta.get("function")
            if function is not None:
                name = function.get("name")
                if name and not slot.name:
                    slot.name = text_field(name, "tool name")
                arguments = function.get("arguments")
                if arguments:
                    self.add_arguments(slot, text_field(arguments, "tool arguments"))
                    if slot.announced:
                        started.append(ToolCallArguments(slot.call_id, slot.index, arguments))
            if slot.name and not slot.announced:
                started.append(self.announce(slot))
                if slot.arguments:  # pieces that came before the name (or with it)
                    started.append(ToolCallArguments(slot.call_id, slot.index, "".join(slot.arguments)))
        return started

    def announce(self, slot: _Slot) -> ToolCallStarted:
        slot.announced = True
        if not slot.call_id:
            slot.call_id = f"call_{slot.index}"
        return ToolCallStarted(call_id=slot.call_id, name=slot.name, index=slot.index)

    def calls(self) -> list[ToolCall]:
        """Complete calls in index order; a call whose name never arrived cannot be run and is dropped."""
        return [ToolCall(s.call_id or f"call_{s.index}", s.name, "".join(s.arguments), s.index)
                for _, s in sorted(self._slots.items()) if s.name]

    def __bool__(self) -> bool:
        return bool(self._slots)


@dataclass(slots=True)
class ModelCall:
    """One request to one upstream: what came back so far, and what it cost."""

    text_parts: list[str] = field(default_factory=list)
    tools: ToolCallAccumulator = field(default_factory=ToolCallAccumulator)
    tool_calls: list[ToolCall] | None = None
    usage: UsageReport | None = None
    finish_reason: str | None = None
    got_content: bool = False
    separated: bool = False   # a blank line was streamed before this call's text

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def final_tool_calls(self) -> list[ToolCall]:
        return self.tool_calls if self.tool_calls is not None else self.tools.calls()


def text_field(value: Any, what: str) -> str:
    """``value`` if it is a string; a TypeError naming ``what`` otherwise (upstream JSON is untrusted)."""
    if type(value) is not str:
        raise TypeError(f"{what} is {type(value).__name__}, not a string")
    return value


def usage_from(raw: Any) -> UsageReport | None:
    """A :class:`UsageReport` from Chat Completions or Responses usage, as an SDK model or as
    parsed JSON (or None when absent)."""
    if raw is None:
        return None
    get: Callable[[str], Any]
    if isinstance(raw, dict):
        get = raw.get
    else:
        def get(name: str) -> Any:
            return getattr(raw, name, None)
    prompt = get("prompt_tokens")
    if prompt is None:
        prompt = get("input_tokens")
    completion = get("completion_tokens")
    if completion is None:
        completion = get("output_tokens")
    if prompt is None and completion is None:
        return None
    prompt, completion = int(prompt or 0), int(completion or 0)
    total = get("total_tokens")
    return UsageReport(prompt, completion, int(total) if total is not None else prompt + completion)


def estimate_tokens(text: str) -> int:
    """About four characters per token: good enough to budget with, and marked as an estimate."""
    return math.ceil(len(text) / 4) if text else 0


def estimate_usage(messages: Sequence[dict[str, Any]], call: ModelCall) -> UsageReport:
    prompt = sum(4 + estimate_tokens(json.dumps(m.get("content") or "", ensure_ascii=False))
                 + estimate_tokens(json.dumps(m.get("tool_calls") or "", ensure_ascii=False)) for m in messages)
    completion = estimate_tokens(call.text) + sum(estimate_tokens(c.name + c.arguments) + 3
                                                  for c in call.final_tool_calls())
    return UsageReport(prompt, completion, prompt + completion, estimated=True)


def add_usage(total: UsageReport | None, more: UsageReport) -> UsageReport:
    if total is None:
        return more
    return UsageReport(total.prompt_tokens + more.prompt_tokens, total.completion_tokens + more.completion_tokens,
                       total.total_tokens + more.total_tokens, total.estimated or more.estimated)
