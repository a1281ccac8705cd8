"""Fuzzed requests (hypothesis) against a real gateway process: no input yields a 5xx, every refusal is
OpenAI's JSON error shape, every stream ends at a frame boundary, and ``/health`` on another connection
never waits more than 100 ms while they are handled (issue 13).
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from api_helpers import MODEL, parse_sse
from hostile_helpers import HEALTH_BOUND, HealthWatch, request, served_gateway

PATHS = ["/v1/chat/completions", "/v1/responses", "/v1/models", f"/v1/models/{MODEL}", "/v1/responses/resp_x",
         "/health", "/metrics", "/", "/v1", "/v1/", "/v2/chat/completions"]

any_text = st.text(st.characters(blacklist_categories=()), max_size=40)  # lone surrogates included
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30)

message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool", "bot"]),
                                 "content": st.one_of(st.text(max_size=30), json_values)})


@st.composite
def chat_like(draw) -> dict:
    """A plausible request with some fields wrong: what careless clients send."""
    body = {"model": draw(st.sampled_from([MODEL, "gpt-4o", ""])), "stream": draw(st.booleans())}
    body["messages"] = draw(st.lists(message, min_size=0, max_size=4))
    body["input"] = draw(st.one_of(st.text(max_size=20), st.lists(message, max_size=3)))
    for key in draw(st.lists(st.sampled_from(["temperature", "max_tokens", "n", "stream_options", "user",
                                              "previous_response_id", "instructions", "store", "tools"]),
                             max_size=3, unique=True)):
        body[key] = draw(json_values)
    if draw(st.booleans()):
        body[draw(st.sampled_from(list(body)))] = draw(json_values)  # one known field of the wrong type
    return body


PATHOLOGICAL = [b"9" * 5000, b"-" + b"1" * 4301, b"[" * 1000 + b"]" * 1000, b"[" * 200_000, b"1e999999",
                b'"\\ud800"', b'"\\udfff\\ud800"', b"{" * 50, b'"' + b"\\" * 1001 + b'"']


@st.composite
def with_pathology(draw) -> bytes:
    """A chat request with one value replaced by raw bytes no encoder would produce."""
    body = json.dumps({**draw(chat_like()), "max_tokens": "HOLE"}).encode()
    return body.replace(b'"HOLE"', draw(st.sampled_from(PATHOLOGICAL)))


bodies = st.one_of(
    chat_like().map(lambda b: json.dumps(b).encode()),
    with_pathology(),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.none(),
)

headers = st.fixed_dictionaries({}, optional={
    "Content-Type": st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain",
                                     "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""]),
    "Content-Encoding": st.sampled_from(["gzip", "deflate", "identity", "br", "x-nope"]),
    "Authorization": st.text(alphabet=string.printable.strip(), max_size=60),
    "Origin": st.sampled_from(["https://evil.example", "null", "http://localhost:3000"]),
    "Accept": st.sampled_from(["text/html", "*/*", "text/event-stream"]),
})


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    config = {"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}}}
    with served_gateway(tmp_path_factory.mktemp("fuzz"), config) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def watch(gw):
    with HealthWatch(gw.host, gw.port, pid=gw.proc.pid) as w:
        yield w


def handled_without_stall(gw, watch, method: str, path: str, body, extra: dict) -> None:
    """The request gets a well-formed answer, and /health stayed fast meanwhile.

    A stall that does not come back when the same request is sent again was
    the shared machine (another process had the CPU), not the server: a
    request that blocks the event loop blocks it every time.
    """
    for _ in range(2):
        mark = watch.mark()
        check(request(gw, method, path, body, extra), method)
        worst = watch.worst_since(mark)
        if worst <= HEALTH_BOUND:
            break
    assert not watch.failures, f"/health failed during {method} {path}: {watch.failures[:3]}"
    assert worst <= HEALTH_BOUND, f"/health took {worst * 1e3:.0f} ms during {method} {path}, twice"


def check(answer, method: str) -> None:
    assert answer.status < 500, (answer.status, answer.body[:300])
    if answer.status >= 400 and method != "HEAD":
        assert answer.headers["content-type"].startswith("application/json"), (answer.status, answer.body[:200])
        error = answer.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        parse_sse(answer.body)  # ends at a frame boundary, every line a valid SSE line


FUZZ = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FUZZ
@given(path=st.sampled_from(["/v1/chat/completions", "/v1/responses"]), body=bodies, extra=headers)
def test_no_body_sent_to_a_model_endpoint_yields_a_5xx_or_stalls_health(gw, watch, path, body, extra):
    extra = {"Content-Type": "application/json", **{k: v for k, v in extra.items() if v != ""}}
    handled_without_stall(gw, watch, "POST", path, body, extra)


@FUZZ
@given(method=st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]),
       path=st.one_of(st.sampled_from(PATHS), st.text(alphabet=string.ascii_letters + "/-_.%", max_size=30)
                      .map(lambda p: "/" + p)),
       body=st.one_of(st.none(), st.binary(max_size=50)), extra=headers)
def test_no_method_or_path_yields_a_5xx_or_stalls_health(gw, watch, method, path, body, extra):
    extra = {k: v for k, v in extra.items() if v != ""}
    handled_without_stall(gw, watch, method, path, body, extra)
