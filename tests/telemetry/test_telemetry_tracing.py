"""The spans on OpenTelemetry's SDK: an API request is one trace; the stop never waits long on a collector."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading

import aiohttp
import pytest

from hermes_gateway import Incoming
from hermes_gateway._core import telemetry
from hermes_gateway.testing import ReferencePlatform, TestGateway

pytest.importorskip("opentelemetry.sdk", reason="the telemetry extra is not installed")
from hermes_gateway._core.telemetry.tracing import FLUSH_THREAD  # noqa: E402


def traced(endpoint: str, **api: bool) -> TestGateway:
    cfg = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
           "telemetry": {"otlp_endpoint": endpoint}}
    return TestGateway(cfg, ReferencePlatform(), **api)


async def test_an_api_request_is_one_trace_with_its_route_status_and_model(otlp):
    async with traced(otlp.url, api_server=True) as gateway, aiohttp.ClientSession() as http:
        async with http.post(f"{gateway.url}/v1/chat/completions", json={
                "model": "hermes-gateway", "stream": True,
                "messages": [{"role": "user", "content": "echo: a secret sentence"}]}) as response:
            assert response.status == 200 and b"[DONE]" in await response.read()
        async with http.get(f"{gateway.url}/v1/models/no-such-model") as response:
            assert response.status == 404
        async with http.get(f"{gateway.url}/health") as response:  # not an API call: no trace
            assert response.status == 200
    traces = list(otlp.traces().values())
    assert len(traces) == 2, traces
    chat, missing = sorted(traces, key=len, reverse=True)
    [root] = [s for s in chat if s.parent_id is None]
    assert (root.name, root.kind) == ("POST /v1/chat/completions", "server")
    assert root.attributes == {"http.request.method": "POST", "http.route": "/v1/chat/completions",
                               "http.response.status_code": 200, "gen_ai.request.model": "hermes-gateway"}
    [upstream] = [s for s in chat if s.parent_id == root.span_id]
    assert upstream.name == "upstream call" and upstream.attributes["gen_ai.request.model"] == "demo"
    assert "first token" in upstream.events
    [lookup] = missing
    assert (lookup.name, lookup.parent_id) == ("GET /v1/models/{model}", None)  # the route, never the path
    assert lookup.attributes["http.response.status_code"] == 404
    assert "a secret sentence" not in repr([s.attributes for s in chat])


@pytest.fixture
def bounded(monkeypatch):
    """A short stop bound: the tests show the stop goes on without the collector, not how long it waits."""
    monkeypatch.setattr(telemetry, "STOP_BOUND", 0.3)


async def a_turn_then_stop(endpoint: str, caplog: pytest.LogCaptureFixture) -> threading.Thread:
    """One traced turn (its spans wait in the batch), then the gateway's stop; the flush thread it left."""
    gateway = traced(endpoint)
    await gateway.start()
    try:
        report = await gateway.receive(Incoming(platform="reference", chat_id="c", text="echo: hi"))
        assert report.delivered
    finally:
        with caplog.at_level(logging.WARNING, logger="hermes_gateway._core.telemetry.tracing"):
            await gateway.stop()
    assert telemetry._tracing is None
    assert "did not take the last spans within 0.3 s; they are dropped" in caplog.text
    [flush] = [t for t in threading.enumerate() if t.name == FLUSH_THREAD]
    return flush


async def test_the_stop_goes_on_when_the_collector_refuses_connections(bounded, caplog):
    with socket.socket() as s:  # a port nobody listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    flush = await a_turn_then_stop(f"http://127.0.0.1:{port}", caplog)
    # the stop ended the exporter's retries (it waits between them): its thread ends without another try
    await asyncio.to_thread(flush.join, 30)
    assert not flush.is_alive()


async def test_the_stop_goes_on_when_the_collector_never_answers(bounded, caplog):
    requests: list[bytes] = []
    connections: list[asyncio.StreamWriter] = []

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        requests.append(await reader.readuntil(b"\r\n\r\n"))
        await reader.read()  # until the exporter gives up and closes: it never gets an answer

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        flush = await a_turn_then_stop(f"http://127.0.0.1:{port}", caplog)
        assert requests and requests[0].startswith(b"POST /v1/traces ")
        assert flush.is_alive()  # the stop returned while the export still waited for its answer
    finally:
        server.close()  # no new connection; then the exporter's request ends (closed): its thread with it
        for writer in connections:
            writer.close()
        await server.wait_closed()
    await asyncio.to_thread(flush.join, 30)
    assert not flush.is_alive()
