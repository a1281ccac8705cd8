"""The model parameters of a request, checked and turned into the agent's :class:`TurnOptions`.

Every parameter of OpenAI's reference for ``POST /v1/chat/completions`` and
``POST /v1/responses`` is either honoured (forwarded to the upstream, in
its Chat Completions name) or refused with a 400 naming it: none is
dropped silently. The refused ones are those the gateway cannot deliver
(other output modalities, logprobs, server-side OpenAI features such as
background responses, stored prompts or conversations); a refused
parameter sent with its "off" value (``logprobs: false``, ``n: 1``,
``include: []``) is accepted, since it asks for nothing. A parameter
OpenAI does not have is a 400 naming it, as OpenAI answers, unless the
operator listed it in ``api_server.extra_params`` (a vendor extension the
upstream understands): then it is sent to the upstream as it is
(:func:`extra_fields`). ``tests/api_server/test_api_params_known.py``
checks :data:`CHAT_FIELDS` / :data:`RESPONSES_FIELDS` against the
``openai`` SDK's own request types.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from dataclasses import replace

from ..agent.options import NO_OPTIONS, TurnOptions
from .client_tools import check_parallel, check_tool_choice, check_tools, offers_gateway_tools
from ..http.errors import ApiError, bad_request
from .progress import FIELD as PROGRESS_FIELD
from .schemas import check_schema, check_schema_name
from .shown import kind_of, shown

#: Chat Completions parameters the gateway refuses unless sent with the value that asks for nothing.
CHAT_REFUSED: dict[str, Callable[[Any], bool]] = {
    "audio": lambda v: v is None,
    "modalities": lambda v: v is None or v == ["text"],
    "prediction": lambda v: v is None,
    "web_search_options": lambda v: v is None,
    "functions": lambda v: v is None,
    "function_call": lambda v: v is None,
    "logprobs": lambda v: v is None or v is False,
    "top_logprobs": lambda v: v is None,
    "moderation": lambda v: v is None,
}
#: The same for Responses.
RESPONSES_REFUSED: dict[str, Callable[[Any], bool]] = {
    "background": lambda v: v is None or v is False,
    "background_options": lambda v: v is None,
    "conversation": lambda v: v is None,
    "prompt": lambda v: v is None,
    "include": lambda v: v is None or v == [],
    "top_logprobs": lambda v: v is None,
    "max_tool_calls": lambda v: v is None,
    "context_management": lambda v: v is None,
    "access_programs": lambda v: v is None,
    "image": lambda v: v is None,
    "moderation": lambda v: v is None,
}
_WHY = {
    "audio": "the gateway's replies are text", "modalities": "the gateway's replies are text (modalities: [\"text\"])",
    "prediction": "predicted outputs are not supported", "web_search_options": "the gateway runs its own tools",
    "functions": "use tools (functions is deprecated)", "function_call": "use tool_choice (function_call is "
    "deprecated)", "logprobs": "log probabilities are not available", "top_logprobs": "log probabilities are "
    "not available", "background": "background responses are not supported", "conversation": "use "
    "previous_response_id", "prompt": "stored prompts are not supported", "include": "no extra output data is "
    "available (send include: [])", "max_tool_calls": "not supported", "context_management": "not supported",
    "background_options": "background responses are not supported", "access_programs": "not supported",
    "image": "not supported", "moderation": "not supported",
}

SERVICE_TIERS = ("auto", "default", "flex", "scale", "priority")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
VERBOSITIES = ("low", "medium", "high")
MAX_STOP = 4
MAX_METADATA = 16
MAX_LOGIT_BIAS = 1024


#: Every key the two functions below read: a body with none of them (most requests) costs one set operation.
_COMMON_KEYS = ("temperature", "top_p", "user", "prompt_cache_key", "safety_identifier", "prompt_cache_retention",
                "service_tier", "metadata", "tools", "tool_choice", "parallel_tool_calls", "prompt_cache_options")
#: (``_check_common_params`` in validation reads a few more, listed here too: max_output_tokens, penalties.)
CHAT_KEYS = frozenset((*_COMMON_KEYS, *CHAT_REFUSED, "max_tokens", "max_completion_tokens", "presence_penalty",
                       "frequency_penalty", "seed", "stop", "logit_bias", "reasoning_effort", "verbosity",
                       "response_format", "store", "max_output_tokens"))
RESPONSES_KEYS = frozenset((*_COMMON_KEYS, *RESPONSES_REFUSED, "max_output_tokens", "truncation", "reasoning", "text",
                            "stream_options", "max_tokens", "max_completion_tokens", "presence_penalty",
                            "frequency_penalty"))


#: Every top-level field of a request the gateway knows: OpenAI's (every one the SDK's request types have) and
#: its own (``hermes_tool_progress``). Any other is refused unless ``api_server.extra_params`` lists it.
CHAT_FIELDS = frozenset((*CHAT_KEYS, "model", "messages", "stream", "stream_options", "n", PROGRESS_FIELD))
RESPONSES_FIELDS = frozenset((*RESPONSES_KEYS, "model", "input", "instructions", "previous_response_id", "stream",
                              "store", PROGRESS_FIELD))


def extra_fields(body: Mapping[str, Any], known: frozenset[str], allowed: frozenset[str],
                 responses: bool) -> dict[str, Any]:
    """The body's fields beyond ``known`` that ``allowed`` (``api_server.extra_params``) lets through; a 400 in
    OpenAI's words naming the first other one (``Unrecognized request argument supplied`` on Chat Completions,
    ``Unknown parameter`` on Responses)."""
    if known.issuperset(body):
        return {}
    extras: dict[str, Any] = {}
    for name in body:
        if name in known:
            continue
        if name not in allowed:
            shown_name = name if len(name) <= 64 else name[:64] + "..."
            message = f"Unknown parameter: '{shown_name}'." if responses \
                else f"Unrecognized request argument supplied: {shown_name}"
            raise ApiError(400, message, param=shown_name, code="unknown_parameter")
        extras[name] = body[name]
    return extras


def with_policy(options: TurnOptions, gateway_tools: str, extras: dict[str, Any]) -> TurnOptions:
    """``options`` with whether the gateway's own tools are offered (``api_server.gateway_tools``) and the
    allowed vendor fields; :data:`NO_OPTIONS` itself when neither changes anything."""
    offered = offers_gateway_tools(gateway_tools, options.client_tools)
    if offered == options.gateway_tools and not extras:
        return options
    return replace(options, gateway_tools=offered, extra=extras)


def chat_options(body: Mapping[str, Any], gateway_tools: str = "auto") -> TurnOptions:
    """Check a Chat Completions body's model parameters; the options the agent forwards.

    ``gateway_tools``: ``api_server.gateway_tools`` (a ``tool_choice: required`` may be met by one of them)."""
    if CHAT_KEYS.isdisjoint(body):
        return NO_OPTIONS
    _refuse(body, CHAT_REFUSED)
    forwarded = _common(body)
    _put_int(body, forwarded, "max_tokens")
    _put_int(body, forwarded, "max_completion_tokens")
    _put_number(body, forwarded, "presence_penalty", -2.0, 2.0)
    _put_number(body, forwarded, "frequency_penalty", -2.0, 2.0)
    seed = body.get("seed")
    if seed is not None:
        if not _is_int(seed) or abs(seed) >= 2 ** 63:
            raise bad_request("seed must be an integer.", "seed")
        forwarded["seed"] = seed
    stop = body.get("stop")
    if stop is not None:
        forwarded["stop"] = _stop(stop)
    bias = body.get("logit_bias")
    if bias is not None:
        forwarded["logit_bias"] = _logit_bias(bias)
    _put_choice(body, forwarded, "reasoning_effort", EFFORTS)
    _put_choice(body, forwarded, "verbosity", VERBOSITIES)
    fmt = body.get("response_format")
    if fmt is not None:
        checked = chat_response_format(fmt)
        if checked is not None:
            forwarded["response_format"] = checked
    tools = check_tools(body.get("tools"), "tools", nested=True)
    offered = offers_gateway_tools(gateway_tools, tools)
    return TurnOptions(forwarded, tools, check_tool_choice(body.get("tool_choice"), tools, nested=True,
                                                           gateway_tools=offered),
                       check_parallel(body.get("parallel_tool_calls")), offered)


def responses_options(body: Mapping[str, Any], gateway_tools: str = "auto") -> TurnOptions:
    """Check a Responses body's model parameters; the options, in Chat Completions terms."""
    if RESPONSES_KEYS.isdisjoint(body):
        return NO_OPTIONS
    _refuse(body, RESPONSES_REFUSED)
    forwarded = _common(body)
    limit = body.get("max_output_tokens")
    if limit is not None:
        if not _is_int(limit) or limit < 1:
            raise bad_request(f"max_output_tokens must be a positive integer, got {shown(limit)}.",
                              "max_output_tokens")
        forwarded["max_completion_tokens"] = limit
    truncation = body.get("truncation")
    if truncation is not None and truncation not in ("auto", "disabled"):
        raise bad_request("truncation must be 'auto' or 'disabled'.", "truncation")
    reasoning = body.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, dict):
            raise bad_request("reasoning must be an object.", "reasoning")
        for key, value in reasoning.items():
            if key == "effort":
                if value is not None and value not in EFFORTS:
                    raise bad_request(f"reasoning.effort must be one of {', '.join(EFFORTS)}.", "reasoning.effort")
                if value is not None:
                    forwarded["reasoning_effort"] = value
            elif value is not None:
                raise bad_request(f"reasoning.{_key(key)} is not supported (only reasoning.effort is).",
                                  f"reasoning.{_key(key)}")
    text = body.get("text")
    if text is not None:
        if not isinstance(text, dict):
            raise bad_request("text must be an object.", "text")
        for key in text:
            if key not in ("format", "verbosity"):
                raise bad_request(f"text.{_key(key)} is not supported (text takes format and verbosity).",
                                  f"text.{_key(key)}")
        _put_choice(text, forwarded, "verbosity", VERBOSITIES, "text.verbosity")
        fmt = text.get("format")
        if fmt is not None:
            checked = responses_text_format(fmt)
            if checked is not None:
                forwarded["response_format"] = checked
    options = body.get("stream_options")
    if options is not None:
        _stream_options(options)
    tools = check_tools(body.get("tools"), "tools", nested=False)
    offered = offers_gateway_tools(gateway_tools, tools)
    return TurnOptions(forwarded, tools, check_tool_choice(body.get("tool_choice"), tools, nested=False,
                                                           gateway_tools=offered),
                       check_parallel(body.get("parallel_tool_calls")), offered)


def chat_response_format(fmt: Any) -> dict[str, Any] | None:
    """``response_format`` checked; None for ``{"type": "text"}`` (the default)."""
    if not isinstance(fmt, dict):
        raise bad_request(f"response_format must be an object, got {kind_of(fmt)}.", "response_format")
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        raise bad_request(f"response_format.type must be one of text, json_object, json_schema, got {shown(kind)}.",
                          "response_format.type")
    inner = fmt.get("json_schema")
    if not isinstance(inner, dict):
        raise bad_request("response_format.json_schema must be an object with name and schema.",
                          "response_format.json_schema")
    return {"type": "json_schema", "json_schema": _json_schema(inner, "response_format.json_schema")}


def responses_text_format(fmt: Any) -> dict[str, Any] | None:
    """``text.format`` checked, as a Chat Completions ``response_format``; None for text."""
    if not isinstance(fmt, dict):
        raise bad_request(f"text.format must be an object, got {kind_of(fmt)}.", "text.format")
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        raise bad_request(f"text.format.type must be one of text, json_object, json_schema, got {shown(kind)}.",
                          "text.format.type")
    inner = {k: v for k, v in fmt.items() if k != "type"}
    return {"type": "json_schema", "json_schema": _json_schema(inner, "text.format")}


def _json_schema(inner: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": check_schema_name(inner.get("name"), f"{where}.name")}
    schema = inner.get("schema")
    if schema is None:
        raise bad_request(f"Missing required parameter: '{where}.schema'.", f"{where}.schema",
                          "missing_required_parameter")
    out["schema"] = check_schema(schema, f"{where}.schema")
    description = inner.get("description")
    if description is not None:
        if not isinstance(description, str):
            raise bad_request(f"{where}.description must be a string.", f"{where}.description")
        out["description"] = description
    strict = inner.get("strict")
    if strict is not None:
        if not isinstance(strict, bool):
            raise bad_request(f"{where}.strict must be a boolean.", f"{where}.strict")
        out["strict"] = strict
    return out


def _refuse(body: Mapping[str, Any], refused: Mapping[str, Callable[[Any], bool]]) -> None:
    for name, harmless in refused.items():
        if name in body and not harmless(body[name]):
            raise bad_request(f"{name} is not supported by this gateway: {_WHY[name]}.", name, "unsupported_parameter")


def _common(body: Mapping[str, Any]) -> dict[str, Any]:
    """What both endpoints share: sampling, user, metadata, caching and tiers."""
    out: dict[str, Any] = {}
    _put_number(body, out, "temperature", 0.0, 2.0)
    _put_number(body, out, "top_p", 0.0, 1.0)
    for name in ("user", "prompt_cache_key", "safety_identifier"):
        value = body.get(name)
        if value is not None:
            if not isinstance(value, str):
                raise bad_request(f"{name} must be a string, got {kind_of(value)}.", name)
            if len(value) > 512:
                raise bad_request(f"{name} must be at most 512 characters.", name)
            out[name] = value
    _put_choice(body, out, "prompt_cache_retention", ("in-memory", "in_memory", "24h"))
    _put_choice(body, out, "service_tier", SERVICE_TIERS)
    metadata = body.get("metadata")
    if metadata is not None:
        out["metadata"] = _metadata(metadata)
    cache = body.get("prompt_cache_options")
    if cache is not None:
        if not isinstance(cache, dict):
            raise bad_request(f"prompt_cache_options must be an object, got {kind_of(cache)}.", "prompt_cache_options")
        out["prompt_cache_options"] = cache
    return out


def _stream_options(options: Any) -> None:
    if not isinstance(options, dict):
        raise bad_request(f"stream_options must be an object, got {kind_of(options)}.", "stream_options")
    value = options.get("include_obfuscation")
    if value is not None and not isinstance(value, bool):
        raise bad_request("stream_options.include_obfuscation must be a boolean.", "stream_options.include_obfuscation")


def _put_number(body: Mapping[str, Any], out: dict[str, Any], name: str, low: float, high: float) -> None:
    value = body.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_request(f"{name} must be a number, got {kind_of(value)}.", name)
    if not math.isfinite(value) or not low <= value <= high:
        raise bad_request(f"{name} must be between {low:g} and {high:g}, got {shown(value)}.", name)
    out[name] = value


def _put_int(body: Mapping[str, Any], out: dict[str, Any], name: str) -> None:
    value = body.get(name)
    if value is None:
        return
    if not _is_int(value) or value < 1 or value >= 2 ** 31:
        raise bad_request(f"{name} must be a positive integer, got {shown(value)}.", name)
    out[name] = value


def _put_choice(body: Mapping[str, Any], out: dict[str, Any], name: str, choices: tuple[str, ...],
                where: str | None = None) -> None:
    value = body.get(name)
    if value is None:
        return
    if value not in choices:
        raise bad_request(f"{where or name} must be one of {', '.join(choices)}, got {shown(value)}.", where or name)
    out[name] = value


def _stop(stop: Any) -> str | list[str]:
    if isinstance(stop, str):
        return stop
    if not isinstance(stop, list) or len(stop) > MAX_STOP or not all(isinstance(s, str) and s for s in stop):
        raise bad_request(f"stop must be a string or an array of at most {MAX_STOP} non-empty strings.", "stop")
    return stop


def _logit_bias(bias: Any) -> dict[str, float]:
    if not isinstance(bias, dict) or len(bias) > MAX_LOGIT_BIAS:
        raise bad_request(f"logit_bias must be an object of at most {MAX_LOGIT_BIAS} token ids.", "logit_bias")
    for token, value in bias.items():
        if not token.isdigit() or isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not -100 <= value <= 100:
            raise bad_request("logit_bias maps token ids (digits) to numbers between -100 and 100.", "logit_bias")
    return bias


def _metadata(metadata: Any) -> dict[str, str]:
    if not isinstance(metadata, dict) or len(metadata) > MAX_METADATA:
        raise bad_request(f"metadata must be an object of at most {MAX_METADATA} string values.", "metadata")
    for key, value in metadata.items():
        if len(key) > 64 or not isinstance(value, str) or len(value) > 512:
            raise bad_request("metadata keys are at most 64 characters, values strings of at most 512.", "metadata")
    return metadata


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _key(key: str) -> str:
    return key if len(key) <= 40 else key[:37] + "..."
