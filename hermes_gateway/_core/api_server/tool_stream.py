"""The client's own tool calls as they stream: which index each has for the client, and what was sent of it.

A client tool call's name arrives first (``ToolCallStarted``), so the
writers know at once that the call is the client's, announce it, and pass
each piece of its arguments on as the upstream writes it
(``ToolCallArguments``): ``delta.tool_calls[].function.arguments`` on Chat
Completions, ``response.function_call_arguments.delta`` on Responses. What
frameworks build on that (instructor's partial objects, the AI SDK's
``tool-input-delta``) sees the arguments grow while the model writes them.

At the turn's end (``TurnEnd.tool_calls``) :meth:`StreamedCalls.finish`
reconciles: the rest of each call's arguments that did not stream (a
non-streamed fallback answer), and the calls never announced. After a
stream reset (a retry replaced a failed upstream stream) pieces are no
longer passed on live; what was sent must be the start of what the retry
produced, or the stream ends with an honest error (:class:`.reply_text.Diverged`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from ..events import ToolCallArguments, ToolCallStarted
from .reply_text import Diverged


@dataclass(slots=True)
class StreamedCall:
    """One client tool call on the wire: ``index`` among the client's calls (Chat Completions), ``slot`` for the
    writer's own use (the Responses ``output_index``), the arguments sent so far."""

    call_id: str
    name: str
    index: int
    slot: int = 0
    sent: list[str] = field(default_factory=list)

    @property
    def arguments(self) -> str:
        return "".join(self.sent)


class StreamedCalls:
    """The client's tool calls of one stream, by the agent's call id."""

    __slots__ = ("names", "calls", "frozen")

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names  # the client's tools (the gateway's own calls are not the client's to see)
        self.calls: dict[str, StreamedCall] = {}
        self.frozen = False  # after a stream reset: nothing more is passed on live

    def started(self, event: ToolCallStarted) -> StreamedCall | None:
        """The new call to announce, or None (not the client's tool, or not streamed now)."""
        if event.name not in self.names or self.frozen or event.call_id in self.calls:
            return None
        call = self.calls[event.call_id] = StreamedCall(event.call_id, event.name, len(self.calls))
        return call

    def piece(self, event: ToolCallArguments) -> StreamedCall | None:
        """The call a piece of arguments belongs to, once recorded as sent (None: not to be passed on)."""
        call = self.calls.get(event.call_id)
        if call is None or self.frozen:
            return None
        call.sent.append(event.delta)
        return call

    def reset(self) -> None:
        self.frozen = True

    def finish(self, final: Sequence[dict[str, Any]]) -> Iterator[tuple[StreamedCall, str, bool]]:
        """For each of the turn's client calls (Chat Completions ``tool_calls`` entries): the call, the rest of
        its arguments still to send, and whether it is new (not announced yet). Raises :class:`Diverged` when
        what was sent is not the start of the final arguments."""
        for entry in final:
            function = entry["function"]
            arguments = function["arguments"]
            call = self.calls.get(entry["id"])
            if call is None:
                call = self.calls[entry["id"]] = StreamedCall(entry["id"], function["name"], len(self.calls))
                call.sent.append(arguments)
                yield call, arguments, True
                continue
            sent = call.arguments
            if not arguments.startswith(sent) or call.name != function["name"]:
                raise Diverged(f"the tool call {call.name} sent to the client differs from the retried one")
            call.sent.append(arguments[len(sent):])
            yield call, arguments[len(sent):], False

    def leftover(self, final: Sequence[dict[str, Any]], cut_short: bool) -> list[StreamedCall]:
        """Announced calls not among ``final``: fine when the reply was cut short (a token limit), else a reset
        changed the answer (:class:`Diverged`)."""
        ids = {entry["id"] for entry in final}
        left = [call for call in self.calls.values() if call.call_id not in ids]
        if left and not cut_short:
            raise Diverged("a tool call sent to the client is not in the retried answer")
        return left
