"""Check request bodies before anything streams, and turn them into agent input.

Everything a client can get wrong is caught here and answered with a 4xx in
OpenAI's shape naming the offending ``param`` (``messages[2].content``), so
a stream never starts for a request that cannot succeed. The model
parameters (sampling, limits, ``response_format``, the client's ``tools``)
are checked in :mod:`.params` and reach the upstream through the agent's
``TurnOptions``. A conversation may end with a user message or with the
results of the client's own tool calls (``role: tool`` /
``function_call_output``): then the turn continues from them. Image parts
(``image_url``, ``input_image``) pass through unless ``model.vision`` is off.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from ..agent.options import NO_OPTIONS, TurnOptions
from ..config import Config
from ..errors import HermesError
from ..http.errors import ApiError, bad_request, echo
from .audio_parts import audio_part
from .params import (CHAT_FIELDS, CHAT_KEYS, RESPONSES_FIELDS, RESPONSES_KEYS, chat_options, extra_fields,
                     responses_options, with_policy)
from .shown import kind_of, shown

CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")
RESPONSE_ROLES = ("system", "developer", "user", "assistant")


@dataclass(slots=True)  # (not frozen: a frozen dataclass sets each of its fields through object.__setattr__)
class TurnInput:
    """What the agent needs for one turn: the new user content and the conversation before it.

    ``message`` is the user's text, or content parts when there are images; None when the
    conversation ends with the client's tool results (the turn continues from them).
    ``input_items``: the Responses input as items with ids (``GET .../input_items``).
    ``record``: keep the turn in the conversation store (Chat Completions ``store: true``).
    """

    message: str | list[dict[str, Any]] | None
    history: list[dict[str, Any]]
    stream: bool
    model: str
    include_usage: bool = False
    instructions: str | None = None
    previous_response_id: str | None = None
    store: bool = True
    conversation: list[dict[str, Any]] = field(default_factory=list)  # history without instructions (Responses)
    options: TurnOptions = NO_OPTIONS
    input_items: list[dict[str, Any]] | tuple[()] = ()
    record: bool = False


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
        raise ApiError(415, f"Content-Type must be application/json (got {shown(request.content_type)}).",
                       code="unsupported_media_type")
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    raw = await _read_body(request, limit)
    if not raw.strip():
        raise bad_request("The request body is empty; send a JSON object.", code="invalid_json")
    _check_size_of_structure(raw)
    try:
        # decoded strictly first: json.loads(bytes) lets UTF-8-encoded surrogates (b"\xed\xa0\x80") through
        body = json.loads(raw.decode(json.detect_encoding(raw)), parse_constant=_not_finite, parse_float=_finite)
    except _NotFinite as exc:
        raise bad_request(f"The JSON body has a number that is not finite ({exc}); numbers must be finite.",
                          code="invalid_json") from None
    except UnicodeDecodeError:
        raise bad_request("The request body is not valid UTF-8 (a lone surrogate or a stray byte); send valid "
                          "Unicode.", code="invalid_unicode") from None
    except json.JSONDecodeError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})"
        raise bad_request(f"We could not parse the JSON body of your request{where}.", code="invalid_json") from None
    except RecursionError:
        raise bad_request("The JSON body of your request is nested too deeply.", code="invalid_json") from None
    except ValueError as exc:  # an integer of more than 4,300 digits (sys.set_int_max_str_digits)
        raise bad_request(f"We could not parse the JSON body of your request: {exc}.", code="invalid_json") from None
    if not isinstance(body, dict):
        raise bad_request(f"The request body must be a JSON object, got {kind_of(body)}.", code="invalid_json")
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


class _NotFinite(HermesError, ValueError):
    """NaN, Infinity or a number too large for a float: Python's json takes them, JSON and every upstream do not."""


def _not_finite(name: str) -> float:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text if len(text) <= 20 else text[:17] + "...")
    return value


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


def parse_chat_request(body: dict[str, Any], *, models: tuple[str, ...], default_stream: bool = False,
                       gateway_tools: str = "auto", extra_params: frozenset[str] = frozenset(),
                       vision: bool = True) -> TurnInput:
    """Validate a ``POST /v1/chat/completions`` body. ``gateway_tools``: ``api_server.gateway_tools``;
    ``extra_params``: fields beyond OpenAI's passed to the upstream (``api_server.extra_params``);
    ``vision``: whether image parts may be sent (``model.vision``)."""
    model = _model(body, models)
    stream = _stream(body, default_stream)
    extras = extra_fields(body, CHAT_FIELDS, extra_params, responses=False)
    include_usage = False
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise bad_request(f"stream_options must be an object, got {kind_of(options)}.", "stream_options")
        usage = options.get("include_usage")
        if usage is not None and not isinstance(usage, bool):
            raise bad_request("stream_options.include_usage must be a boolean.", "stream_options.include_usage")
        include_usage = bool(usage)
    if CHAT_KEYS.isdisjoint(body):  # most requests set no model parameter: nothing more to look at
        turn_options, record = NO_OPTIONS, None
    else:
        _check_common_params(body)
        turn_options = chat_options(body, gateway_tools)
        record = body.get("store")
        if record is not None and not isinstance(record, bool):
            raise bad_request("store must be a boolean.", "store")
    turn_options = with_policy(turn_options, gateway_tools, extras)
    n = body.get("n")
    if n is not None and (not _is_int(n) or n != 1):
        raise bad_request("Only n=1 is supported: the gateway's agent produces one reply per turn.", "n")
    messages = body.get("messages")
    if messages is None:
        raise bad_request("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    if not isinstance(messages, list):
        raise bad_request(f"messages must be an array, got {kind_of(messages)}.", "messages")
    if not messages:
        raise bad_request("messages must contain at least one message.", "messages", "empty_array")
    if len(messages) > MAX_MESSAGES:
        raise bad_request(f"The request has {len(messages)} messages; the gateway takes at most {MAX_MESSAGES} "
                          "in one request.", "messages", "too_many_messages")
    history = [_chat_message(m, i, vision) for i, m in enumerate(messages)]
    last = history[-1]
    role = last["role"]
    if role == "tool" or len(history) > 1:
        _check_tool_results(history, "messages")
    if role == "tool":  # the client ran its tools: the turn continues from their results
        return TurnInput(message=None, history=history, stream=stream, model=model, include_usage=include_usage,
                         options=turn_options, record=record is True)
    if role != "user":
        raise bad_request(f"The last message must have role 'user' or 'tool' (it is {role!r}): the gateway's agent "
                          "answers a user message or continues from tool results.",
                          f"messages[{len(messages) - 1}].role")
    content = last["content"]
    if not (content.strip() if type(content) is str else _has_content(content)):
        raise bad_request("The last user message is empty.", f"messages[{len(messages) - 1}].content")
    return TurnInput(message=content, history=history[:-1], stream=stream, model=model,
                     include_usage=include_usage, options=turn_options, record=record is True)


def _has_content(content: str | list[dict[str, Any]]) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return any(p.get("type") != "text" or p.get("text", "").strip() for p in content)


def _check_tool_results(history: list[dict[str, Any]], where: str, first: int = 0) -> None:
    """A tool result must answer a call of the assistant message before it (the upstream refuses otherwise).

    Messages before ``first`` came from an earlier response (``previous_response_id``): the index a 400
    names counts from there. Responses name the item's ``call_id``, Chat Completions the ``tool_call_id``.
    """
    key = "tool_call_id" if where == "messages" else "call_id"
    calls: set[str] = set()
    for i, message in enumerate(history):
        role = message["role"]
        if role == "assistant":
            calls = {c["id"] for c in message.get("tool_calls") or ()}
        elif role == "tool":
            if message["tool_call_id"] not in calls:
                at = f"{where}[{i - first}]" if i >= first else where
                raise bad_request(f"{at} answers tool call {shown(message['tool_call_id'])}, which no "
                                  "earlier assistant message made.", f"{at}.{key}")
        else:
            calls = set()


def _chat_message(message: Any, i: int, vision: bool = True) -> dict[str, Any]:
    where = f"messages[{i}]"
    if not isinstance(message, dict):
        raise bad_request(f"{where} must be an object, got {kind_of(message)}.", where)
    role = message.get("role")
    if role not in CHAT_ROLES:
        raise bad_request(f"{where}.role must be one of {', '.join(CHAT_ROLES)}, got {shown(role)}.", f"{where}.role")
    content = message.get("content")
    out: dict[str, Any] = {"role": role}
    if role == "assistant" and content is None:
        if not message.get("tool_calls"):
            raise bad_request(f"{where}: an assistant message needs content or tool_calls.", f"{where}.content")
        out["content"] = None
    elif role == "user":
        out["content"] = content if type(content) is str else _parts_content(content, f"{where}.content", ("text",),
                                                                             vision, audio=True)
    else:
        out["content"] = _text_content(content, f"{where}.content", ("text", "refusal") if role == "assistant"
                                       else ("text",))
    if len(message) == 2 and "content" in message:  # role and content only (most messages): nothing else to check
        if role == "tool":
            raise bad_request(f"{where}: a tool message needs a string tool_call_id.", f"{where}.tool_call_id")
        return out
    name = message.get("name")
    if name is not None:
        if not isinstance(name, str):
            raise bad_request(f"{where}.name must be a string.", f"{where}.name")
        out["name"] = name
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"{where}: a tool message needs a string tool_call_id.", f"{where}.tool_call_id")
        out["tool_call_id"] = call_id
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            raise bad_request(f"{where}.tool_calls: only an assistant message makes tool calls.", f"{where}.tool_calls")
        if calls:
            out["tool_calls"] = _tool_calls(calls, f"{where}.tool_calls")
    return out


def _tool_calls(calls: Any, where: str) -> list[dict[str, Any]]:
    """An assistant message's ``tool_calls``, checked and reduced to what an upstream accepts."""
    if not isinstance(calls, list) or len(calls) > 128:
        raise bad_request(f"{where} must be an array of at most 128 tool calls.", where)
    out = []
    for j, call in enumerate(calls):
        at = f"{where}[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or call.get("type", "function") != "function" or not isinstance(function, dict):
            raise bad_request(f"{at} must be a function call: {{id, type: 'function', function: {{name, arguments}}}}.",
                              at)
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments", "")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"{at}.id must be a non-empty string.", f"{at}.id")
        if not isinstance(name, str) or not name:
            raise bad_request(f"{at}.function.name must be a non-empty string.", f"{at}.function.name")
        if not isinstance(arguments, str):
            raise bad_request(f"{at}.function.arguments must be a string (JSON text).", f"{at}.function.arguments")
        out.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    return out


#: An image a client may send: a data: URL with an image type, or an http(s) link the upstream fetches.
_IMAGE_URL = re.compile(r"(?:data:image/[A-Za-z0-9.+-]+;base64,|https?://)", re.IGNORECASE)


def _image_part(url: Any, detail: Any, where: str, vision: bool, inner: str) -> dict[str, Any]:
    """One image part, Chat Completions shaped; ``inner`` is where its url and detail sit inside the part
    (``image_url.`` in Chat Completions, nothing in Responses), for the param a 400 names."""
    if not vision:
        raise bad_request(f"{where} is an image, but the gateway's model does not take images (model.vision is "
                          "false); send text only.", where, "images_not_supported")
    if not isinstance(url, str) or _IMAGE_URL.match(url) is None:
        raise bad_request(f"{where}: the image must be a data:image/...;base64 URL or an http(s) URL.",
                          f"{where}.{inner}url" if inner else f"{where}.image_url")
    if detail is not None and detail not in ("auto", "low", "high"):
        raise bad_request(f"{where}.{inner}detail must be auto, low or high.", f"{where}.{inner}detail")
    image: dict[str, Any] = {"url": url}
    if detail is not None:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def _parts_content(content: Any, where: str, text_types: tuple[str, ...], vision: bool,
                   image_types: tuple[str, ...] = ("image_url",), audio: bool = False) -> str | list[dict[str, Any]]:
    """A user message's content: its text, or (when it has images or audio) Chat Completions parts.

    ``audio``: ``input_audio`` parts are taken (Chat Completions; the Responses API has none)."""
    kinds = (*image_types, "input_audio") if audio else image_types
    if not isinstance(content, list) or not any(isinstance(p, dict) and p.get("type") in kinds for p in content):
        return _text_content(content, where, text_types)
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        at = f"{where}[{j}]"
        if not isinstance(part, dict):
            raise bad_request(f"{at} must be an object, got {kind_of(part)}.", at)
        kind = part.get("type")
        if kind in text_types:
            text = part.get("text")
            if not isinstance(text, str):
                raise bad_request(f"{at}.text must be a string.", f"{at}.text")
            parts.append({"type": "text", "text": text})
        elif kind == "image_url":
            image = part.get("image_url")
            if isinstance(image, str):
                image = {"url": image}
            if not isinstance(image, dict):
                raise bad_request(f"{at}.image_url must be an object with a url.", f"{at}.image_url")
            parts.append(_image_part(image.get("url"), image.get("detail"), at, vision, "image_url."))
        elif kind == "input_image":
            if part.get("file_id") is not None:
                raise bad_request(f"{at}.file_id is not supported (the gateway has no file store); send image_url.",
                                  f"{at}.file_id")
            parts.append(_image_part(part.get("image_url"), part.get("detail"), at, vision, ""))
        elif kind == "input_audio" and audio:  # heard by voice.transcription, or passed on: api_server/audio_parts
            parts.append(audio_part(part.get("input_audio"), at))
        else:
            raise bad_request(f"{at}.type {shown(kind)} is not supported; only text"
                              f"{', image and audio' if audio else ' and image'} parts "
                              f"({', '.join((*text_types, *kinds))}) are.", f"{at}.type")
    return parts


def parse_responses_request(body: dict[str, Any], *, models: tuple[str, ...], default_stream: bool = False,
                            conversation_of: Callable[[str], list[dict[str, Any]] | None],
                            gateway_tools: str = "auto", extra_params: frozenset[str] = frozenset(),
                            vision: bool = True) -> TurnInput:
    """Validate a ``POST /v1/responses`` body; ``conversation_of`` looks up ``previous_response_id``."""
    model = _model(body, models)
    stream = _stream(body, default_stream)
    extras = extra_fields(body, RESPONSES_FIELDS, extra_params, responses=True)
    if RESPONSES_KEYS.isdisjoint(body):
        turn_options = NO_OPTIONS
    else:
        _check_common_params(body)
        turn_options = responses_options(body, gateway_tools)
    turn_options = with_policy(turn_options, gateway_tools, extras)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise bad_request(f"instructions must be a string, got {kind_of(instructions)}.", "instructions")
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
            raise ApiError(404, f"Previous response with id '{echo(previous_id)}' not found.",
                           param="previous_response_id",
                           code="previous_response_not_found")
        earlier = list(found)
    if "input" not in body or body["input"] is None:
        raise bad_request("Missing required parameter: 'input'.", "input", "missing_required_parameter")
    input_items = _input_items(body["input"], vision)
    items = _as_messages(input_items)
    conversation = earlier + items
    if len(items) == len(input_items):  # (items and input items line up: calls were not merged)
        _check_tool_results(conversation, "input", len(earlier))
    else:
        _check_tool_results(conversation, "input", len(conversation))
    last = items[-1]
    if last["role"] == "tool":  # the client's function_call_output items: the turn continues from them
        message = None
    elif last["role"] != "user" or not _has_content(last["content"]):
        raise bad_request("The input must end with a non-empty user message or function_call_output items.", "input")
    else:
        message = last["content"]
        conversation = conversation[:-1]
    history = ([{"role": "system", "content": instructions}] if instructions else []) + conversation
    return TurnInput(message=message, history=history, stream=stream, model=model,
                     instructions=instructions, previous_response_id=previous_id, store=store,
                     conversation=conversation, options=turn_options, input_items=input_items)


def _input_items(value: Any, vision: bool) -> list[dict[str, Any]]:
    """The Responses ``input`` as checked items, each with an ``id`` (as ``GET .../input_items`` lists them)."""
    if isinstance(value, str):
        if not value.strip():
            raise bad_request("input must not be empty.", "input", "empty_string")
        return [{"id": _item_id("msg"), "type": "message", "role": "user", "status": "completed",
                 "content": [{"type": "input_text", "text": value}]}]
    if not isinstance(value, list):
        raise bad_request(f"input must be a string or an array of items, got {kind_of(value)}.", "input")
    if not value:
        raise bad_request("input must contain at least one item.", "input", "empty_array")
    if len(value) > MAX_MESSAGES:
        raise bad_request(f"The input has {len(value)} items; the gateway takes at most {MAX_MESSAGES} in one "
                          "request.", "input", "too_many_messages")
    items = []
    for i, item in enumerate(value):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise bad_request(f"{where} must be an object, got {kind_of(item)}.", where)
        kind = item.get("type", "message")
        if kind == "function_call":
            call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments", "")
            for key, value_ in (("call_id", call_id), ("name", name)):
                if not isinstance(value_, str) or not value_:
                    raise bad_request(f"{where}.{key} must be a non-empty string.", f"{where}.{key}")
            if not isinstance(arguments, str):
                raise bad_request(f"{where}.arguments must be a string (JSON text).", f"{where}.arguments")
            items.append({"id": _given_id(item, "fc"), "type": "function_call", "status": "completed",
                          "call_id": call_id, "name": name, "arguments": arguments})
            continue
        if kind == "function_call_output":
            call_id, output = item.get("call_id"), item.get("output")
            if not isinstance(call_id, str) or not call_id:
                raise bad_request(f"{where}.call_id must be a non-empty string.", f"{where}.call_id")
            output = _text_content(output, f"{where}.output", ("input_text", "output_text", "text"))
            items.append({"id": _given_id(item, "fco"), "type": "function_call_output", "status": "completed",
                          "call_id": call_id, "output": output})
            continue
        if kind != "message":
            raise bad_request(f"{where}.type {shown(kind)} is not supported; send message, function_call and "
                              "function_call_output items.", f"{where}.type")
        role = item.get("role")
        if role not in RESPONSE_ROLES:
            raise bad_request(f"{where}.role must be one of {', '.join(RESPONSE_ROLES)}, got {shown(role)}.",
                              f"{where}.role")
        if role == "user":
            content = _parts_content(item.get("content"), f"{where}.content", ("input_text", "output_text", "text"),
                                     vision, ("input_image", "image_url"))
        else:
            content = _text_content(item.get("content"), f"{where}.content", ("input_text", "output_text", "text",
                                                                               "refusal"))
        items.append({"id": _given_id(item, "msg"), "type": "message", "role": role, "status": "completed",
                      "content": _item_content(content, role)})
    return items


def _item_content(content: str | list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """Message content as Responses parts (how ``input_items`` shows it)."""
    text_type = "output_text" if role == "assistant" else "input_text"
    if isinstance(content, str):
        return [{"type": text_type, "text": content}]
    return [{"type": text_type, "text": p["text"]} if p["type"] == "text" else
            {"type": "input_image", "image_url": p["image_url"]["url"], "detail": p["image_url"].get("detail", "auto")}
            for p in content]


def _as_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Input items as the Chat Completions messages the agent keeps (calls merged into one assistant message)."""
    messages: list[dict[str, Any]] = []
    for item in items:
        kind = item["type"]
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        else:
            parts = item["content"]
            if any(p["type"] == "input_image" for p in parts):
                content: Any = [{"type": "text", "text": p["text"]} if p["type"] != "input_image" else
                                {"type": "image_url", "image_url": {"url": p["image_url"], "detail": p["detail"]}}
                                for p in parts]
            else:
                content = "\n".join(p["text"] for p in parts)
            messages.append({"role": item["role"], "content": content})
    return messages


def _item_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _given_id(item: dict[str, Any], prefix: str) -> str:
    given = item.get("id")
    return given if isinstance(given, str) and 0 < len(given) <= 128 else _item_id(prefix)


def _text_content(content: Any, where: str, part_types: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise bad_request(f"{where}[{j}] must be an object, got {kind_of(part)}.", f"{where}[{j}]")
            if part.get("type") not in part_types:
                raise bad_request(f"{where}[{j}].type {shown(part.get('type'))} is not supported; only text "
                                  f"parts ({', '.join(part_types)}) are.", f"{where}[{j}].type")
            field_name = "refusal" if part.get("type") == "refusal" else "text"  # an assistant's refusal part
            text = part.get(field_name)
            if not isinstance(text, str):
                raise bad_request(f"{where}[{j}].{field_name} must be a string.", f"{where}[{j}].{field_name}")
            texts.append(text)
        return "\n".join(texts)
    if content is None:
        raise bad_request(f"Missing required parameter: '{where}'.", where, "missing_required_parameter")
    raise bad_request(f"{where} must be a string or an array of text parts, got {kind_of(content)}.", where)


def _model(body: dict[str, Any], models: tuple[str, ...]) -> str:
    model = body.get("model")
    if model is None:
        raise bad_request("Missing required parameter: 'model'.", "model", "missing_required_parameter")
    if not isinstance(model, str):
        raise bad_request(f"model must be a string, got {kind_of(model)}.", "model")
    if model not in models:
        raise ApiError(404, f"The model '{echo(model)}' does not exist. Available: {', '.join(models)} "
                            "(see GET /v1/models).", param="model", code="model_not_found")
    return model


def _stream(body: dict[str, Any], default: bool) -> bool:
    """The client's ``stream`` field; absent or null, ``default`` (the API server passes False: OpenAI's
    default, whatever ``streaming.enabled`` says for chats)."""
    stream = body.get("stream")
    if stream is None:
        return default
    if not isinstance(stream, bool):
        raise bad_request(f"stream must be a boolean, got {kind_of(stream)}.", "stream")
    return stream


def _check_common_params(body: dict[str, Any]) -> None:
    """Types of the common model parameters (called only when the body has one of ``params.CHAT_KEYS`` /
    ``RESPONSES_KEYS``, which list every name read here)."""
    for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise bad_request(f"{name} must be a number, got {kind_of(value)}.", name)
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(name)
        if value is not None and (not _is_int(value) or value < 1):
            raise bad_request(f"{name} must be a positive integer, got {shown(value)}.", name)
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise bad_request("user must be a string.", "user")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
