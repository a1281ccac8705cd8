"""Traces (``telemetry.otlp_endpoint``), seen from a real platform: a Telegram turn with a tool call and a 429 arrives as one trace.

The gateway exports to a local OTLP/HTTP receiver (the test kit's
:class:`~hermes_gateway.testing.otlp.OtlpReceiver`); the person's message
comes through the Bot API emulator, the demo model calls the built-in
``calculate`` tool, and the reply's ``sendMessage`` is answered 429 once.
"""

from __future__ import annotations

import json
import logging

import pytest

from hermes_gateway import RateBudget
from hermes_gateway._core.cli.json_logs import JsonFormatter, TextFormatter
from hermes_gateway.testing import TestGateway, eventually

hermes_telegram = pytest.importorskip("hermes_telegram", reason="the Telegram plugin is not installed")
from hermes_telegram import plugin  # noqa: E402
from hermes_telegram.emulator import BotApiEmulator  # noqa: E402

pytest.importorskip("opentelemetry.sdk", reason="the telemetry extra is not installed")
from hermes_gateway.testing.otlp import OtlpReceiver  # noqa: E402

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
#: Telegram's wire behaviour without pacing worth waiting for (``Platform`` fields replaced for the test).
FAST_LIMITS = {"budgets": {"default": RateBudget(rate=200, burst=20)}, "edit_interval": 0.0}
QUESTION = 'tool: calculate {"expression": "6*7"}'
ANSWER = "The tool calculate returned: 42"


class Lines(logging.Handler):
    """Each record formatted where it was written (the trace id is read from the writer's context)."""

    def __init__(self, formatter: logging.Formatter) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(formatter)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def config(base_url: str, *, streaming: dict) -> dict:
    """A config.yaml mapping: the demo model, Telegram on the emulator."""
    return {"model": {"demo": {"tokens_per_second": 300}}, "streaming": {"telegram": streaming},
            "platforms": {"telegram": {"enabled": True, "token": TOKEN, "base_url": base_url, "poll_timeout": 5}}}


@pytest.fixture
async def api():
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def receiver():
    async with OtlpReceiver() as running:
        yield running


def children(spans, parent):
    return [s for s in spans if s.parent_id == parent.span_id]


async def test_a_turn_with_a_tool_call_and_a_429_is_one_trace_with_its_spans(api, receiver):
    cfg = config(api.base_url, streaming={"enabled": False})  # one final sendMessage: the one answered 429
    cfg["telemetry"] = {"otlp_endpoint": receiver.url, "service_name": "bot-under-test"}
    api.inject_rate_limit(42, 1, method="sendMessage")
    as_json, as_text = Lines(JsonFormatter()), Lines(TextFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("hermes_gateway")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(as_json)
    logger.addHandler(as_text)
    try:
        async with TestGateway(cfg, plugin, limits=FAST_LIMITS, shutdown_grace=0.5):
            await api.push_message(42, QUESTION)
            await eventually(lambda: api.screen(42) == [ANSWER], lambda: api.chat(42).calls)
    finally:  # stopped: the last spans are sent
        logger.removeHandler(as_json)
        logger.removeHandler(as_text)
        logger.setLevel(level)
    assert not api.chat(42).violations  # nothing reached the chat before retry_after had passed

    traces = receiver.traces()
    assert len(traces) == 1, {t: [s.name for s in spans] for t, spans in traces.items()}
    [(trace_id, spans)] = traces.items()
    [root] = [s for s in spans if s.parent_id is None]
    assert root.name == "turn" and root.service == "bot-under-test"
    assert root.attributes["hermes.platform"] == "telegram" and root.attributes["hermes.chat.kind"] == "private"
    assert root.attributes["hermes.turn.delivered"] is True and root.attributes["hermes.turn.rate_limited"] == 1

    under_root = children(spans, root)
    names = [s.name for s in under_root]
    assert names.count("receive") == names.count("queue wait") == 1 and names.count("final") == 1
    [received] = [s for s in under_root if s.name == "receive"]
    [waited] = [s for s in under_root if s.name == "queue wait"]
    assert root.start_ns == received.start_ns <= received.end_ns == waited.start_ns <= waited.end_ns

    upstream = [s for s in under_root if s.name == "upstream call"]
    assert len(upstream) == 2  # the call that asked for the tool, then the one that answered with its result
    for call in upstream:
        assert call.attributes["gen_ai.request.model"] == "demo" and call.kind == "client"
        assert call.attributes["gen_ai.usage.input_tokens"] > 0 and call.attributes["gen_ai.usage.output_tokens"] > 0
        assert call.attributes["hermes.time_to_first_token"] >= 0 and "first token" in call.events
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in upstream] == [("tool_calls",), ("stop",)]
    [tool] = [s for s in under_root if s.name == "tool call"]
    assert tool.attributes["gen_ai.tool.name"] == "calculate" and tool.attributes["hermes.outcome"] == "ok"
    assert upstream[0].end_ns <= tool.start_ns and tool.end_ns <= upstream[1].start_ns

    # the final text: its sendMessage answered 429 (retry after 1 s), then sent again once that had passed
    [final] = [s for s in under_root if s.name == "final"]
    sent = [s for s in children(spans, final) if s.name == "platform call"]
    assert [(s.attributes["hermes.platform.method"], s.attributes["hermes.outcome"]) for s in sent] == \
        [("on_stream_end", "rate_limited"), ("on_stream_end", "ok")]
    assert sent[0].attributes["hermes.retry_after"] == 1.0 and sent[0].attributes["hermes.rate_limit.scope"] == "chat"
    assert sent[0].status == "error" and sent[1].start_ns - sent[0].end_ns >= 1e9
    typing = [s for s in under_root if s.name == "platform call"]
    assert all(s.attributes["hermes.platform.method"] == "on_stream_start" for s in typing)

    words = [v for s in spans for v in s.attributes.values() if isinstance(v, str)]
    assert not [w for w in words if "6*7" in w or "42" in w or "calculate returned" in w]  # no text, no chat id

    # the turn's log lines carry its trace id (JSON: beside its ids; text: at the end), the others none
    records = [json.loads(line) for line in as_json.lines]
    in_turn = [r for r in records if r.get("chat_id") == "42"]
    assert in_turn and all(r.get("trace_id") == trace_id for r in in_turn), in_turn
    assert all("trace_id" not in r for r in records if "chat_id" not in r)
    assert any(line.endswith(f" trace_id={trace_id}") for line in as_text.lines)
