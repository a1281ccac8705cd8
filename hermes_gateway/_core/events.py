"""The typed events an agent turn produces.

Every consumer (platform delivery, the terminal renderer, the SSE writers)
reads the same stream of these, so they are plain frozen dataclasses with
no behaviour: cheap to create on the hot path and easy to match on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .media import Media


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Visible text the model just produced (think blocks may still be inside)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """Emitted the moment a tool call's name is known, before its arguments finish."""

    call_id: str
    name: str
    index: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallArguments:
    """A piece of a tool call's arguments, as the upstream streamed it (after its ``ToolCallStarted``).

    The API server streams these on for a client's own tool (``delta.tool_calls[].function.arguments``,
    ``response.function_call_arguments.delta``); everything else ignores them."""

    call_id: str
    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class UpstreamRefusal:
    """Why the upstream refused the turn's request, in terms a client can act on (``TurnEnd.refusal``).

    ``status`` is the upstream's HTTP status (400, 422, 429, 401, ...); ``message``, ``param``, ``code``
    and ``type`` its error body's fields (secrets masked); ``retry_after`` its ``Retry-After`` header.
    """

    status: int
    message: str
    param: str | None = None
    code: str | None = None
    type: str | None = None
    retry_after: str | None = None
    retry_after_ms: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A tool ran; ``summary`` is a short, printable form of its result."""

    call_id: str
    name: str
    arguments: str
    summary: str
    ok: bool = True


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token usage of one upstream call; ``estimated`` when the upstream gave none."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class StreamReset:
    """Text already emitted this turn is being replaced (a fallback retry after partial output).

    Consumers that can rewrite (message edits, the terminal) discard what they
    showed since the turn started; the final text arrives in ``TurnEnd.reply``.
    """

    reason: str = ""


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The turn is over. ``reply`` is post-processed (think blocks stripped,
    trailing whitespace trimmed); ``raw`` is everything the model said.
    ``media``: the attachments the turn's tools returned, in order, to be
    delivered after ``reply`` (the model saw only their stand-ins).
    ``tool_calls``: calls of an API client's own tools (Chat Completions
    ``tool_calls`` entries) that end the turn for the client to run;
    ``finish_reason``: ``stop``, ``length`` (cut by a token limit),
    ``tool_calls`` or the upstream's own reason. ``refusal``: with ``error``, the upstream's own
    refusal when that is why the turn failed (a 400, a 429, a 401), so an API client can be told the same.
    ``note``: a line for the person that the reply was cut by the gateway (``model.max_reply_chars``;
    ``finish_reason`` is then ``length``): chats end the reply with it."""

    reply: str
    raw: str = ""
    interrupted: bool = False
    error: str | None = None
    usage: UsageReport | None = None
    messages: list[dict] = field(default_factory=list)
    media: tuple[Media, ...] = ()
    tool_calls: tuple[dict, ...] = ()
    finish_reason: str = "stop"
    refusal: UpstreamRefusal | None = None
    note: str | None = None
    #: the turn stopped at ``model.max_turns`` with the model still calling tools (retrying would do the same)
    rounds_exhausted: bool = False


StreamEvent = Union[TextDelta, ToolCallStarted, ToolCallArguments, ToolCallFinished, UsageReport, StreamReset,
                    TurnEnd]
