"""Hostile or careless request bodies and headers (issue 13): a 4xx in OpenAI's shape, never a 5xx,
and ``/health`` answers within 100 ms on another connection while each one is handled.

The gateway is a real ``hermes-gateway run`` process with the demo model; the
watcher polls ``/health`` from a thread of this process.
"""

from __future__ import annotations

import gzip
import json

import pytest

from api_helpers import MODEL, parse_sse
from hostile_helpers import (HealthWatch, assert_openai_error, closed_by_peer, post_json, raw_socket, request,
                             served_gateway)

CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    config = {"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}}}
    with served_gateway(tmp_path_factory.mktemp("hostile"), config) as gateway:
        yield gateway


def tiny_messages(n: int) -> bytes:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": "x"} for i in range(n - 1)]
    messages.append({"role": "user", "content": "echo: still here"})
    return json.dumps({"model": MODEL, "messages": messages, "stream": True}).encode()


def nested(depth: int) -> bytes:
    return b'{"model": "' + MODEL.encode() + b'", "messages": ' + b"[" * depth + b"]" * depth + b"}"


def streamed_text(raw: bytes) -> str:
    events = parse_sse(raw)
    assert events[-1].data == "[DONE]"
    return "".join(c["delta"].get("content") or "" for e in events[:-1] for c in e.json()["choices"])


HOSTILE = {
    # name: (body bytes, extra headers, expected status, expected error code)
    "20,000 tiny messages": (tiny_messages(20_000), {}, 400, "too_many_messages"),
    "100,000 tiny messages (3.6 MB)": (tiny_messages(100_000), {}, 400, "too_many_messages"),
    "200,000 empty objects": (json.dumps({"model": MODEL, "metadata": [{}] * 200_000}).encode(), {}, 400,
                              "too_many_objects"),
    "a 5,000-digit integer": (b'{"model": "' + MODEL.encode() + b'", "max_tokens": ' + b"9" * 5000 + b"}", {}, 400,
                              "invalid_json"),
    "JSON nested 1,000 deep": (nested(1000), {}, 400, "invalid_json"),
    "JSON nested 100,000 deep": (nested(100_000), {}, 400, "too_many_objects"),
    "Content-Encoding: gzip on a plain body": (tiny_messages(2), {"Content-Encoding": "gzip"}, 400, "invalid_body"),
    "Content-Encoding: deflate on a plain body": (tiny_messages(2), {"Content-Encoding": "deflate"}, 400,
                                                  "invalid_body"),
    "Content-Encoding: br (not supported)": (tiny_messages(2), {"Content-Encoding": "br"}, 400, None),
    "a lone surrogate in content": (b'{"model": "' + MODEL.encode() + b'", "messages": [{"role": "user", '
                                    b'"content": "hi \\ud800 there"}]}', {}, 400, "invalid_unicode"),
    "a lone surrogate in a key": (b'{"model": "' + MODEL.encode() + b'", "\\udc00": 1, "messages": [{"role": '
                                  b'"user", "content": "hi"}]}', {}, 400, "invalid_unicode"),
    "a lone surrogate as raw UTF-8 bytes": (b'{"model": "' + MODEL.encode() + b'", "messages": [{"role": "user", '
                                            b'"content": "hi \xed\xa0\x80 there"}]}', {}, 400, "invalid_unicode"),
    "a stray byte that is not UTF-8": (b'{"model": "' + MODEL.encode() + b'", "messages": [{"role": "user", '
                                       b'"content": "hi \xff there"}]}', {}, 400, "invalid_unicode"),
    **{f"temperature: {number}": (b'{"model": "' + MODEL.encode() + b'", "temperature": ' + number.encode()
                                  + b', "messages": [{"role": "user", "content": "hi"}]}', {}, 400, "invalid_json")
       for number in ("NaN", "-Infinity", "Infinity", "1e999", "-1e999")},
    "Content-Type: text/plain": (tiny_messages(2), {"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
    "no Content-Type": (tiny_messages(2), {"Content-Type": ""}, 415, "unsupported_media_type"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_body_is_a_4xx_and_health_stays_responsive(gw, name):
    body, headers, status, code = HOSTILE[name]
    headers = dict(headers)
    if headers.get("Content-Type") == "":
        del headers["Content-Type"]
        with HealthWatch(gw.host, gw.port, pid=gw.proc.pid) as watch:
            answer = request(gw, "POST", CHAT, body, headers)
    else:
        with HealthWatch(gw.host, gw.port, pid=gw.proc.pid) as watch:
            answer = post_json(gw, CHAT, body, headers)
    assert_openai_error(answer, status, code)
    watch.assert_responsive(name)


def test_the_largest_accepted_conversation_streams_without_blocking_health(gw):
    """4,096 messages (the cap) are taken, relayed upstream and answered; nothing else waits on them."""
    with HealthWatch(gw.host, gw.port, pid=gw.proc.pid) as watch:
        answer = post_json(gw, CHAT, tiny_messages(4096))
    assert answer.status == 200, answer.body[:300]
    assert streamed_text(answer.body) == "still here"
    watch.assert_responsive("a 4,096-message request")


def test_a_valid_gzip_body_is_still_read(gw):
    body = gzip.compress(tiny_messages(2))
    answer = post_json(gw, CHAT, body, {"Content-Encoding": "gzip"})
    assert answer.status == 200 and streamed_text(answer.body) == "still here"


def test_a_lone_surrogate_names_the_field(gw):
    body = (b'{"model": "' + MODEL.encode() + b'", "input": [{"role": "user", "content": "a \\udfff"}]}')
    error = assert_openai_error(post_json(gw, "/v1/responses", body), 400, "invalid_unicode")
    assert error["param"] == "input[0].content"


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/", 404), ("GET", "/admin", 404), ("POST", "/health", 405), ("PUT", "/metrics", 405),
    ("PATCH", "/v1/chat/completions", 405), ("GET", "/v1/nope", 404),
    ("BREW", "/v1/models", 400),  # not a method aiohttp's parser knows: refused before routing
])
def test_routes_outside_v1_and_unknown_methods_answer_json(gw, method, path, status):
    assert_openai_error(request(gw, method, path), status)


def test_an_oversized_authorization_header_is_neither_echoed_nor_logged(gw):
    key = "sk-" + "S3cr3t" * 2000  # 12 kB, over aiohttp's 8,190-byte header limit
    answer = request(gw, "GET", "/v1/models", headers={"Authorization": f"Bearer {key}"})
    assert_openai_error(answer, 400, "bad_http_request")
    assert b"S3cr3t" not in answer.body
    assert "S3cr3t" not in gw.stderr()
    assert request(gw, "GET", "/health").status == 200


def test_an_oversized_header_line_and_a_garbage_request_line_answer_json(gw):
    assert_openai_error(request(gw, "GET", "/v1/models", headers={"X-Junk": "j" * 20_000}), 400, "bad_http_request")
    assert "jjjjjjjj" not in gw.stderr()
    sock = raw_socket(gw)
    sock.sendall(b"G\x01T /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = closed_by_peer(sock, 5)
    sock.close()
    assert answer is not None and b" 400 " in answer.split(b"\r\n")[0] and b'"code": "bad_http_request"' in answer


@pytest.mark.parametrize("method, path, body", [
    ("POST", "/v1/responses", {"model": MODEL, "input": "hi", "previous_response_id": "resp_" + "x" * 900_000}),
    ("POST", CHAT, {"model": "m" * 900_000, "messages": [{"role": "user", "content": "hi"}]}),
    ("GET", "/v1/models/" + "m" * 7000, None),
    ("GET", "/v1/responses/resp_" + "x" * 7000, None),
    ("DELETE", "/v1/responses/resp_" + "x" * 7000, None),
], ids=["previous_response_id", "model", "GET model", "GET response", "DELETE response"])
def test_a_404_repeats_only_a_short_prefix_of_the_id(gw, method, path, body):
    raw = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    answer = request(gw, method, path, raw, headers)
    error = assert_openai_error(answer, 404)
    assert len(answer.body) < 1000, f"a {len(answer.body):,}-byte error body"
    assert "xxxxxxxx" in error["message"] or "mmmmmmmm" in error["message"], "a prefix is still shown"
