"""Check request bodies before anything streams, and turn them into agent input.

Everything a client can get wrong is caught here and answered with a 4xx in
OpenAI's shape naming the offending ``param`` (``messages[2].content``), so
a stream never starts for a request that cannot succeed. Parameters that
only steer a model the gateway does not control (temperature, client-side
``tools``) are type-checked and otherwise left to the gateway's own agent.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from ..config import Config
from ..http.errors import ApiError, bad_request

CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")
RESPONSE_ROLES = ("system", "developer", "user", "assistant")


@dataclass(frozen=True)
class TurnInput:
    """What the agent needs for one turn: the new user text and the conversation before it."""

    message: str
    history: list[dict[str, Any]]
    stream: bool
    model: str
    include_usage: bool = False
    instructions: str | None = None
    previous_response_id: str | None = None
    store: bool = True
    conversation: list[dict[str, Any]] = field(default_factory=list)  # history without instructions (Responses)


def model_ids(config: Config) -> tuple[str, ...]:
    """The model ids clients may ask for: ``api_server.model_name``, then the real endpoints' names.

    Clients that hard-code a model name (``gpt-4o-mini``) work unchanged; whichever id
    is asked for, the gateway's own agent answers (primary, then fallbacks) and the
    reply carries the id the client sent. The demo model's name is not offered.
    """
    model = config.model
    names = [config.api_server.model_name]
    names += [e.name for e in (model.endpoint, *model.fallback) if e.base_url]
    return tuple(dict.fromkeys(names))


#: At most this many messages (or Responses input items) in one request. Every message costs CPU on
#: the event loop (parsing, validating, re-encoding for the upstream); 4,096 keep a request under ~10 ms
#: of it, far beyond any model's context. Counted in the raw bytes before parsing.
MAX_MESSAGES = 4096
#: At most this many JSON objects and arrays in one body: ``json.loads`` cannot yield to the event loop,
#: and 200,000 tiny objects (600 kB) hold it for ~50 ms. Strings are not counted.
MAX_CONTAINERS = 50_000
#: The whole body must arrive within this many seconds of the request's headers (a trickling or stalled
#: upload otherwise holds a connection and a handler forever).
BODY_TIMEOUT = 30.0

_ROLE_KEY = b'"role"'  # inside a JSON string a quote is always escaped, so this is only ever a key (or value)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


async def read_json_body(request: web.Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object, with every way it can be wrong answered by a 4xx, never a 5xx.

    415 unless ``Content-Type: application/json`` (a browser page can send
    ``text/plain`` without a CORS preflight); 413 beyond ``limit`` bytes;
    408 when the body does not arrive within :data:`BODY_TIMEOUT`; 400 for
    a body that is not a JSON object, is badly encoded (``Content-Encoding``
    that does not match), nests too deep, has a number too long to convert,
    a lone UTF-16 surrogate, or more than :data:`MAX_MESSAGES` messages or
    :data:`MAX_CONTAINERS` objects (bounded work on the event loop).
    """
    if request.content_type != "application/json":
        raise ApiError(415, f"Content-Type must be application/json (got {_show(request.content_type)}).",
                       code="unsupported_media_type")
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    raw = await _read_body(request, limit)
    if not raw.strip():
        raise bad_request("The request body is empty; send a JSON object.", code="invalid_json")
    _check_size_of_structure(raw)
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise bad_request(f"We could not parse the JSON body of your request{where}.", code="invalid_json") from None
    except RecursionError:
        raise bad_request("The JSON body of your request is nested too deeply.", code="invalid_json") from None
    except ValueError as exc:  # an integer of more than 4,300 digits (sys.set_int_max_str_digits)
        raise bad_request(f"We could not parse the JSON body of your request: {exc}.", code="invalid_json") from None
    if not isinstance(body, dict):
        raise bad_request(f"The request body must be a JSON object, got {_kind(body)}.", code="invalid_json")
    if _SURROGATE_ESCAPE.search(raw) is not None:
        _check_unicode(body, "")
    return body


async def _read_body(request: web.Request, limit: int) -> bytes:
    content = request.content
    chunks: list[bytes] = []
    size = 0
    try:
        if content.is_eof():  # the whole body has arrived (small bodies nearly always): nothing to wait for
            raw = await content.read()
            if len(raw) > limit:
                raise _too_large(limit)
            return raw
        async with asyncio.timeout(BODY_TIMEOUT):
            async for chunk in content.iter_any():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except TimeoutError:
        raise ApiError(408, f"The request body did not arrive within {BODY_TIMEOUT:g} s.",
                       code="request_timeout") from None
    except (HttpProcessingError, RequestPayloadError) as exc:  # e.g. Content-Encoding: gzip on a plain body
        raise bad_request(f"The request body could not be decoded ({type(exc).__name__}); check its "
                          "Content-Encoding.", code="invalid_body") from None
    return b"".join(chunks)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"The request body is larger than the limit of {limit} bytes (api_server.max_body_bytes).",
                    code="request_too_large")


def _check_size_of_structure(raw: bytes) -> None:
    """Refuse, before parsing, bodies whose parsing alone would hold the event loop too long."""
    messages = raw.count(_ROLE_KEY)
    if messages > MAX_MESSAGES:
        raise bad_request(f"The request has about {messages} messages; the gateway takes at most {MAX_MESSAGES} "
                          "in one request.", "messages", "too_many_messages")
    if raw.count(b"{") + raw.count(b"[") > MAX_CONTAINERS:
        containers = (lambda s: s.count(b"{") + s.count(b"["))(_JSON_STRING.sub(b'""', raw))  # not in strings
        if containers > MAX_CONTAINERS:
            raise bad_request(f"The request body has {containers} JSON objects and arrays; the gateway takes at "
                              f"most {MAX_CONTAINERS}.", code="too_many_objects")


def _check_unicode(value: Any, where: str) -> None:
    """400 for a lone surrogate (``"\\ud800"``): valid JSON, but no upstream can be sent it as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise bad_request(f"{where or 'A string'} contains a lone UTF-16 surrogate; send valid Unicode.",
                              where or None, "invalid_unicode") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_unicode(key, where or "A key")
            _check_unicode(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_unicode(item, f"{where}[{i}]")


def parse_chat_request(body: dict[str, Any], *, models: tuple[str, ...], default_stream: bool) -> TurnInput:
    """Validate a ``POST /v1/chat/completions`` body."""
    model = _model(body, models)
    stream = _stream(body, default_stream)
    include_usage = False
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise bad_request(f"stream_options must be an object, got {_kind(options)}.", "stream_options")
        usage = options.get("include_usage")
        if usage is not None and not isinstance(usage, bool):
            raise bad_request("stream_options.include_usage must be a boolean.", "stream_options.include_usage")
        include_usage = bool(usage)
    _check_common_params(body)
    n = body.get("n")
    if n is not None and (not _is_int(n) or n != 1):
        raise bad_request("Only n=1 is supported: the gateway's agent produces one reply per turn.", "n")
    messages = body.get("messages")
    if messages is None:
        raise bad_request("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    if not isinstance(messages, list):
        raise bad_request(f"messages must be an array, got {_kind(messages)}.", "messages")
    if not messages:
        raise bad_request("messages must contain at least one message.", "messages", "empty_array")
    if len(messages) > MAX_MESSAGES:
        raise bad_request(f"The request has {len(messages)} messages; the gateway takes at most {MAX_MESSAGES} "
                          "in one request.", "messages", "too_many_messages")
    history = [_chat_message(m, i) for i, m in enumerate(messages)]
    last = history[-1]
    if last["role"] != "user":
        raise bad_request(f"The last message must have role 'user' (it is {last['role']!r}): the gateway's agent "
                          "answers a user message.", f"messages[{len(messages) - 1}].role")
    text = last["content"]
    if not text.strip():
        raise bad_request("The last user message is empty.", f"messages[{len(messages) - 1}].content")
    return TurnInput(message=text, history=history[:-1], stream=stream, model=model, include_usage=include_usage)


def _chat_message(message: Any, i: int) -> dict[str, Any]:
    where = f"messages[{i}]"
    if not isinstance(message, dict):
        raise bad_request(f"{where} must be an object, got {_kind(message)}.", where)
    role = message.get("role")
    if role not in CHAT_ROLES:
        raise bad_request(f"{where}.role must be one of {', '.join(CHAT_ROLES)}, got {_show(role)}.", f"{where}.role")
    content = message.get("content")
    out: dict[str, Any] = {"role": role}
    if role == "assistant" and content is None:
        if not message.get("tool_calls"):
            raise bad_request(f"{where}: an assistant message needs content or tool_calls.", f"{where}.content")
        out["content"] = None
    else:
        out["content"] = _text_content(content, f"{where}.content", ("text",))
    for key in ("name", "tool_call_id", "tool_calls"):
        if key in message and message[key] is not None:
            out[key] = message[key]
    if role == "tool" and not isinstance(out.get("tool_call_id"), str):
        raise bad_request(f"{where}: a tool message needs a string tool_call_id.", f"{where}.tool_call_id")
    return out


def parse_responses_request(body: dict[str, Any], *, models: tuple[str, ...], default_stream: bool,
                            conversation_of: Callable[[str], list[dict[str, Any]] | None]) -> TurnInput:
    """Validate a ``POST /v1/responses`` body; ``conversation_of`` looks up ``previous_response_id``."""
    model = _model(body, models)
    stream = _stream(body, default_stream)
    _check_common_params(body)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise bad_request(f"instructions must be a string, got {_kind(instructions)}.", "instructions")
    store = body.get("store", True)
    if store is None:
        store = True
    if not isinstance(store, bool):
        raise bad_request("store must be a boolean.", "store")
    previous_id = body.get("previous_response_id")
    earlier: list[dict[str, Any]] = []
    if previous_id is not None:
        if not isinstance(previous_id, str) or not previous_id:
            raise bad_request("previous_response_id must be a non-empty string.", "previous_response_id")
        found = conversation_of(previous_id)
        if found is None:
            raise ApiError(404, f"Previous response with id '{previous_id}' not found.", param="previous_response_id",
                           code="previous_response_not_found")
        earlier = list(found)
    if "input" not in body or body["input"] is None:
        raise bad_request("Missing required parameter: 'input'.", "input", "missing_required_parameter")
    items = _response_input(body["input"])
    last = items[-1]
    if last["role"] != "user" or not last["content"].strip():
        raise bad_request("The input must end with a non-empty user message.", "input")
    conversation = earlier + items[:-1]
    history = ([{"role": "system", "content": instructions}] if instructions else []) + conversation
    return TurnInput(message=last["content"], history=history, stream=stream, model=model,
                     instructions=instructions, previous_response_id=previous_id, store=store,
                     conversation=conversation)


def _response_input(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        if not value.strip():
            raise bad_request("input must not be empty.", "input", "empty_string")
        return [{"role": "user", "content": value}]
    if not isinstance(value, list):
        raise bad_request(f"input must be a string or an array of messages, got {_kind(value)}.", "input")
    if not value:
        raise bad_request("input must contain at least one item.", "input", "empty_array")
    if len(value) > MAX_MESSAGES:
        raise bad_request(f"The input has {len(value)} items; the gateway takes at most {MAX_MESSAGES} in one "
                          "request.", "input", "too_many_messages")
    items = []
    for i, item in enumerate(value):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise bad_request(f"{where} must be an object, got {_kind(item)}.", where)
        kind = item.get("type", "message")
        if kind != "message":
            raise bad_request(f"{where}.type {_show(kind)} is not supported; send message items "
                              "(the gateway's agent runs its own tools).", f"{where}.type")
        role = item.get("role")
        if role not in RESPONSE_ROLES:
            raise bad_request(f"{where}.role must be one of {', '.join(RESPONSE_ROLES)}, got {_show(role)}.",
                              f"{where}.role")
        text = _text_content(item.get("content"), f"{where}.content", ("input_text", "output_text", "text"))
        items.append({"role": role, "content": text})
    return items


def _text_content(content: Any, where: str, part_types: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise bad_request(f"{where}[{j}] must be an object, got {_kind(part)}.", f"{where}[{j}]")
            if part.get("type") not in part_types:
                raise bad_request(f"{where}[{j}].type {_show(part.get('type'))} is not supported; only text "
                                  f"parts ({', '.join(part_types)}) are.", f"{where}[{j}].type")
            text = part.get("text")
            if not isinstance(text, str):
                raise bad_request(f"{where}[{j}].text must be a string.", f"{where}[{j}].text")
            texts.append(text)
        return "\n".join(texts)
    if content is None:
        raise bad_request(f"Missing required parameter: '{where}'.", where, "missing_required_parameter")
    raise bad_request(f"{where} must be a string or an array of text parts, got {_kind(content)}.", where)


def _model(body: dict[str, Any], models: tuple[str, ...]) -> str:
    model = body.get("model")
    if model is None:
        raise bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter")
    if not isinstance(model, str):
        raise bad_request(f"model must be a string, got {_kind(model)}.", "model")
    if model not in models:
        raise ApiError(404, f"The model '{model}' does not exist. Available: {', '.join(models)} "
                            "(see GET /v1/models).", param="model", code="model_not_found")
    return model


def _stream(body: dict[str, Any], default: bool) -> bool:
    """The client's ``stream`` field wins; absent or null, the config decides."""
    stream = body.get("stream")
    if stream is None:
        return default
    if not isinstance(stream, bool):
        raise bad_request(f"stream must be a boolean, got {_kind(stream)}.", "stream")
    return stream


def _check_common_params(body: dict[str, Any]) -> None:
    for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise bad_request(f"{name} must be a number, got {_kind(value)}.", name)
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(name)
        if value is not None and (not _is_int(value) or value < 1):
            raise bad_request(f"{name} must be a positive integer, got {_show(value)}.", name)
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise bad_request("user must be a string.", "user")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return _kind(value)
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
