"""What an API client asks of the model for one turn, beyond the conversation: :class:`TurnOptions`.

The API server validates a request's model parameters (sampling, limits,
``response_format``, the client's own ``tools``) into one of these, in
Chat Completions terms; the agent puts them into every upstream request of
the turn (:func:`chat_body` / :func:`responses_body`, which translates them
for an endpoint in ``api_mode: responses``). Chats and the terminal pass
none: their requests are exactly what they were.

Client tools are offered beside the gateway's own when ``gateway_tools``
says so (``api_server.gateway_tools``); a call to one ends the turn the
OpenAI way (the client runs it and sends the result back), while the
gateway's tools keep running server-side. ``tool_choice`` binds the
model's first call of the turn only (:func:`later_round`): after a gateway
tool ran, forcing another call would loop until ``model.max_turns``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping

#: Chat Completions fields forwarded to the upstream as they are (already validated by the API server).
FORWARDED = ("temperature", "top_p", "seed", "stop", "max_tokens", "max_completion_tokens", "response_format",
             "user", "metadata", "presence_penalty", "frequency_penalty", "logit_bias", "service_tier",
             "reasoning_effort", "verbosity", "prompt_cache_key", "safety_identifier", "prompt_cache_retention",
             "prompt_cache_options")

#: Their names in a Responses request; a field without an equivalent there is not sent to such an endpoint.
_RESPONSES_NAMES = {"temperature": "temperature", "top_p": "top_p", "user": "user", "metadata": "metadata",
                    "service_tier": "service_tier", "max_completion_tokens": "max_output_tokens",
                    "max_tokens": "max_output_tokens", "prompt_cache_key": "prompt_cache_key",
                    "safety_identifier": "safety_identifier", "prompt_cache_retention": "prompt_cache_retention",
                    "prompt_cache_options": "prompt_cache_options"}


@dataclass(frozen=True)
class TurnOptions:
    """A client's parameters for one turn, in Chat Completions shape.

    ``body``: fields of :data:`FORWARDED` the client set. ``client_tools``:
    ``{"type": "function", "function": {...}}`` entries. ``tool_choice``:
    ``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function",
    "function": {"name": ...}}`` (None: not set). ``gateway_tools``: whether the
    gateway's own tools are offered beside the client's. ``extra``: vendor
    fields the operator allowed (``api_server.extra_params``), sent to the
    upstream as they are.
    """

    body: Mapping[str, Any] = field(default_factory=dict)
    client_tools: tuple[dict[str, Any], ...] = ()
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    gateway_tools: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)

    @cached_property  # (a frozen dataclass still has a __dict__ for it)
    def client_tool_names(self) -> frozenset[str]:
        return frozenset(t["function"]["name"] for t in self.client_tools)

    @property
    def structured(self) -> bool:
        """The client asked for JSON (``response_format`` json_object / json_schema): the reply is the
        model's text unaltered, no reasoning filter, no post-processing."""
        fmt = self.body.get("response_format")
        return isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema")


NO_OPTIONS = TurnOptions()


def later_round(options: TurnOptions) -> TurnOptions:
    """The options for the turn's second and later model calls: a forcing ``tool_choice`` becomes ``auto``."""
    if options.tool_choice is None or options.tool_choice in ("auto", "none"):
        return options
    return replace(options, tool_choice="auto")


def chat_body(options: TurnOptions, gateway_tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The fields ``options`` adds to a Chat Completions request (tools included)."""
    out: dict[str, Any] = {**options.extra, **options.body}
    tools = [*options.client_tools, *gateway_tools]  # the client's first: what it offered is what it cares about
    if tools:
        out["tools"] = tools
        if options.tool_choice is not None:
            out["tool_choice"] = options.tool_choice
    if options.parallel_tool_calls is not None and tools:
        out["parallel_tool_calls"] = options.parallel_tool_calls
    return out


def responses_body(options: TurnOptions, gateway_tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The same for a Responses request: tools flattened, ``response_format`` as ``text.format``,
    token limits as ``max_output_tokens``."""
    out: dict[str, Any] = dict(options.extra)
    for name, value in options.body.items():
        if name in _RESPONSES_NAMES:
            out[_RESPONSES_NAMES[name]] = value
    fmt = options.body.get("response_format")
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            schema = fmt.get("json_schema") or {}
            out["text"] = {"format": {"type": "json_schema", **schema}}
        else:
            out["text"] = {"format": {"type": fmt.get("type")}}
    if options.body.get("verbosity") is not None:
        out.setdefault("text", {})["verbosity"] = options.body["verbosity"]
    if options.body.get("reasoning_effort") is not None:
        out["reasoning"] = {"effort": options.body["reasoning_effort"]}
    tools = [*(flat_tool(t) for t in options.client_tools), *gateway_tools]
    if tools:
        out["tools"] = tools
    choice = options.tool_choice if tools else None
    if isinstance(choice, Mapping):
        out["tool_choice"] = {"type": "function", "name": choice["function"]["name"]}
    elif choice is not None:
        out["tool_choice"] = choice
    if options.parallel_tool_calls is not None and tools:
        out["parallel_tool_calls"] = options.parallel_tool_calls
    return out


def flat_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions function tool as a Responses one (no ``function`` wrapper)."""
    function = tool["function"]
    return {"type": "function", **function}


def nested_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses function tool as a Chat Completions one."""
    return {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}
