"""``/metrics`` read over HTTP, as Prometheus reads it, after real replies: the numbers an operator looks at.

Each number is checked against what actually happened: the reference
platform's own call log (every call, its hook, how the platform answered),
the chat's screen, the SSE wire of an API request.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import aiohttp
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from hermes_gateway import Incoming, RateBudget, StreamSettings, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery
from hermes_gateway import PluginHost
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.metrics import GatewayMetrics
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import Fault, ReferencePlatform, run_virtual

WORDS = "one two three four five six seven eight"
API = ("hermes_gateway._core.api_server.plugin",)  # the API server without the built-in reference platform


class Webhooks:
    """The inbound half of a webhook platform for the reference chat: a chat-only gateway in webhook mode."""

    def __init__(self) -> None:
        self.replies: list[asyncio.Future] = []

    @hookimpl
    def register_routes(self, app: web.Application, host: PluginHost) -> None:
        async def receive(request: web.Request) -> web.Response:
            body = await request.json()
            self.replies.append(host.receive(
                Incoming("reference", body["chat"], body["text"], update_id=body["id"])))
            return web.json_response({"ok": True})
        app.router.add_post("/webhooks/reference", receive)


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)})


def config(*, api: bool, **api_server: Any) -> Any:
    return parse_config({
        "model": {"demo": {"tokens_per_second": 40}},
        "streaming": {"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}},
        "platforms": {"reference": {"enabled": True}},
        "api_server": {"port": 0, "enabled": api, **api_server},
    }, env={})


class Scrape:
    """One read of ``/metrics``: sample values by name and labels (label order does not matter)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.values: dict[tuple[str, frozenset], float] = {
            (s.name, frozenset(s.labels.items())): s.value for f in self.families.values() for s in f.samples}

    def __call__(self, name: str, **labels: str) -> float:
        """The sample ``name{labels}``; 0 when it was never set (a labelled counter appears on first use)."""
        return self.values.get((name, frozenset(labels.items())), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """The sum over every sample of ``name`` whose labels include ``labels``."""
        want = set(labels.items())
        return sum(v for (n, ls), v in self.values.items() if n == name and want <= ls)


async def scrape(gateway: Gateway, **headers: str) -> Scrape:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{gateway.url}/metrics", headers=headers) as r:
            assert r.status == 200, await r.text()
            assert r.headers["Content-Type"].startswith("text/plain")
            return Scrape(await r.text())


async def webhook(gateway: Gateway, update_id: str, chat: str, text: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{gateway.url}/webhooks/reference",
                             json={"id": update_id, "chat": chat, "text": text}) as r:
            assert r.status == 200


def platform_answers(ref: ReferencePlatform, chat: str) -> Counter[tuple[str, str]]:
    """(hook, outcome) of every call the platform saw, in the metrics' words."""
    words = {"ok": "ok", "not_modified": "ok", "rate_limited": "rate_limited", "error": "failed",
             "timeout": "maybe_delivered", "timeout_landed": "maybe_delivered"}
    return Counter((c.hook, words[c.outcome]) for c in ref.chat(chat).calls)


async def test_a_webhook_reply_with_one_429_is_counted_on_a_gateway_without_the_api():
    """Chat-only, webhook mode, API server off: the listener still serves /metrics, and it adds up."""
    ref, hooks = reference(), Webhooks()
    ref.chat("7").fail_next(Fault.rate_limited(0.2, on="send"))  # the first message is refused once
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, hooks])
    async with Gateway(config(api=False), plugins) as gateway:
        before = await scrape(gateway)
        assert before("hermes_inbound_dedupe_hits_total") == 0
        assert before("hermes_coordination_lease_takeovers_total") == 0
        await webhook(gateway, "u1", "7", f"echo: {WORDS}")
        [report] = await asyncio.gather(*hooks.replies)
        await webhook(gateway, "u1", "7", f"echo: {WORDS}")  # the platform retries the same update
        assert await hooks.replies[1] is None
        m = await scrape(gateway)
    assert ref.chat("7").screen == [WORDS] and report.delivered
    calls = platform_answers(ref, "7")
    assert calls[("on_delta", "rate_limited")] == 1 and sum(calls.values()) == report.calls
    for (method, outcome), n in calls.items():
        assert m("hermes_delivery_calls_total", platform="reference", method=method, outcome=outcome) == n, \
            (method, outcome, m.text)
    assert m.total("hermes_delivery_calls_total") == sum(calls.values())
    assert m.total("hermes_delivery_calls_total", outcome="rate_limited") == 1
    assert m("hermes_delivery_rate_limited_total", platform="reference", scope="chat") == 1
    bot_429s = ("hermes_delivery_rate_limited_total", frozenset({("platform", "reference"), ("scope", "bot")}))
    assert m.values[bot_429s] == 0, "present at 0 (so the first one shows in rate()), not missing"
    assert m("hermes_delivery_rate_limit_wait_seconds_total", platform="reference", scope="chat") == 0.2
    assert m("hermes_delivery_first_text_seconds_count", platform="reference") == 1
    assert m("hermes_delivery_first_text_seconds_sum", platform="reference") > 0
    assert m("hermes_delivery_final_latency_seconds_count", platform="reference") == 1
    assert m("hermes_delivery_replies_in_flight", platform="reference") == 0
    assert m("hermes_inbound_dedupe_hits_total") == 1
    assert not [name for name in m.families if name.startswith("hermes_api_")], "the API server is off"


async def test_replies_in_flight_while_a_reply_streams():
    ref, hooks = reference(), Webhooks()
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, hooks])
    async with Gateway(config(api=False), plugins) as gateway:
        long = " ".join([WORDS] * 6)  # about 1.2 s at 40 words/s
        await webhook(gateway, "u1", "1", f"echo: {long}")
        await webhook(gateway, "u2", "2", f"echo: {long}")
        while not (ref.chat("1").messages and ref.chat("2").messages):
            await asyncio.sleep(0.01)
        during = await scrape(gateway)
        await asyncio.gather(*hooks.replies)
        after = await scrape(gateway)
    assert during("hermes_delivery_replies_in_flight", platform="reference") == 2
    assert during("hermes_delivery_final_latency_seconds_count", platform="reference") == 0
    assert after("hermes_delivery_replies_in_flight", platform="reference") == 0
    assert after("hermes_delivery_first_text_seconds_count", platform="reference") == 2
    assert after("hermes_delivery_final_latency_seconds_count", platform="reference") == 2


async def test_an_api_request_and_a_chat_reply_show_in_one_metrics():
    """With the API server on, its /metrics serves the whole gateway: its own families and delivery's."""
    ref = reference()
    plugins = make_plugins(builtins=API, load_entry_points=False, extra=[ref])
    async with Gateway(config(api=True), plugins) as gateway:
        report = await gateway.handle_incoming("reference", "3", f"echo: {WORDS}")
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{gateway.url}/v1/chat/completions", json={
                    "model": "hermes-gateway", "stream": True,
                    "messages": [{"role": "user", "content": f"echo: {WORDS}"}]}) as r:
                assert r.status == 200
                wire = (await r.read()).decode()
        m = await scrape(gateway)
    texts = [json.loads(line[6:])["choices"][0]["delta"].get("content") for line in wire.splitlines()
             if line.startswith("data: {") and json.loads(line[6:])["choices"]]
    assert "".join(t for t in texts if t) == WORDS
    assert m("hermes_api_requests_total", route="chat_completions", status="200") == 1
    assert m("hermes_api_deltas_total") == len([t for t in texts if t])
    assert m("hermes_api_time_to_first_token_seconds_count") == 1
    assert m("hermes_api_active_streams") == 0
    assert report.delivered and ref.chat("3").screen == [WORDS]
    assert m("hermes_delivery_first_text_seconds_count", platform="reference") == 1
    assert m.total("hermes_delivery_calls_total", platform="reference", outcome="ok") == len(ref.chat("3").calls)


async def test_metrics_keeps_the_api_servers_rules_without_the_api_server():
    """No key needed (Prometheus sends none), but a keyless loopback listener answers only localhost names,
    and a browser origin only when listed in api_server.cors_origins."""
    ref, hooks = reference(), Webhooks()
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, hooks])
    async with Gateway(config(api=False, cors_origins=["http://ok.example"]), plugins) as gateway:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{gateway.url}/metrics", headers={"Host": "evil.example"}) as r:
                assert r.status == 403 and (await r.json())["error"]["code"] == "host_not_allowed"
            async with http.get(f"{gateway.url}/metrics", headers={"Origin": "http://evil.example"}) as r:
                assert r.status == 403 and (await r.json())["error"]["code"] == "origin_not_allowed"
        assert "hermes_delivery_calls_total" in (await scrape(gateway, Origin="http://ok.example")).text


async def test_lease_takeovers_are_counted_by_one_call():
    ref, hooks = reference(), Webhooks()
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref, hooks])
    async with Gateway(config(api=False), plugins) as gateway:
        gateway.metrics.lease_takeovers.inc()  # what the coordination backend does when it takes over a lease
        assert (await scrape(gateway))("hermes_coordination_lease_takeovers_total") == 1


def test_counts_kept_elsewhere_are_read_at_each_scrape_and_added_to_inc():
    kept = {"takeovers": 2, "hits": 5}  # what a coordination backend and the inbound runtime counted
    metrics = GatewayMetrics(lease_takeovers=lambda: kept["takeovers"], dedupe_hits=lambda: kept["hits"])
    metrics.lease_takeovers.inc()
    assert registry_scrape(metrics)("hermes_coordination_lease_takeovers_total") == 3
    kept["takeovers"] = 4
    m = registry_scrape(metrics)
    assert m("hermes_coordination_lease_takeovers_total") == 5 and m("hermes_inbound_dedupe_hits_total") == 5


def test_platform_plugins_count_their_own_events_on_the_gateways_families():
    metrics = GatewayMetrics()
    metrics.platform_event("whatsapp", "status_delivered")
    metrics.platform_event("whatsapp", "status_delivered", 2)
    metrics.platform_event("whatsapp", "bad_signature")
    body, _ = metrics.render()
    assert "# TYPE hermes_platform_events_total counter" in body.decode()
    m = registry_scrape(metrics)
    assert m("hermes_platform_events_total", platform="whatsapp", event="status_delivered") == 3
    assert m("hermes_platform_events_total", platform="whatsapp", event="bad_signature") == 1
    assert m.total("hermes_api_requests_total") == 0, "no API server families on a gateway without one"


async def test_two_gateways_in_one_process_count_apart():
    (ref_a, hooks_a), (ref_b, hooks_b) = (reference(), Webhooks()), (reference(), Webhooks())
    a = Gateway(config(api=True), make_plugins(builtins=API, load_entry_points=False, extra=[ref_a, hooks_a]))
    b = Gateway(config(api=True), make_plugins(builtins=API, load_entry_points=False, extra=[ref_b, hooks_b]))
    async with a, b:
        await a.handle_incoming("reference", "1", "echo: only here")
        gateway_a, gateway_b = await scrape(a), await scrape(b)
    assert gateway_a("hermes_delivery_first_text_seconds_count", platform="reference") == 1
    assert gateway_b("hermes_delivery_first_text_seconds_count", platform="reference") == 0
    assert gateway_b.total("hermes_delivery_calls_total") == 0


# -- the outcomes one by one, on the delivery core and a virtual clock ------------------------------------------

def deliver(ref: ReferencePlatform, metrics: GatewayMetrics, text: str = WORDS) -> Any:
    async def main() -> Any:
        delivery = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref]), observer=metrics)
        session = delivery.session("reference", "1", settings=StreamSettings(True, edit_interval=0.0, min_tokens=1))
        session.start()
        for word in text.split():
            await asyncio.sleep(0.5)  # the model's next word
            session.feed(word + " ")
        return await session.finish()
    return run_virtual(main())


def registry_scrape(metrics: GatewayMetrics) -> Scrape:
    body, _ = metrics.render()
    return Scrape(body.decode())


def test_a_bot_wide_429_is_counted_with_its_scope_and_wait():
    ref, metrics = reference(), GatewayMetrics()
    ref.fail_bot_next(3.0)
    report = deliver(ref, metrics)
    m = registry_scrape(metrics)
    assert report.delivered and ref.chat("1").screen == [WORDS]
    assert m("hermes_delivery_rate_limited_total", platform="reference", scope="bot") == 1
    assert m("hermes_delivery_rate_limit_wait_seconds_total", platform="reference", scope="bot") == 3.0
    assert m.total("hermes_delivery_calls_total", outcome="rate_limited") == 1


def test_failed_and_maybe_delivered_calls_are_told_apart():
    ref, metrics = reference(), GatewayMetrics()
    ref.chat("1").fail_next(Fault.error(on="edit"))
    ref.chat("1").fail_next(Fault.timeout(landed=True, on="edit"))
    report = deliver(ref, metrics)
    m = registry_scrape(metrics)
    assert report.delivered and ref.chat("1").screen == [WORDS]
    assert m.total("hermes_delivery_calls_total", outcome="failed") == 1
    assert m.total("hermes_delivery_calls_total", outcome="maybe_delivered") == 1
    for (method, outcome), n in platform_answers(ref, "1").items():
        assert m("hermes_delivery_calls_total", platform="reference", method=method, outcome=outcome) == n


def test_first_text_is_timed_from_the_start_of_the_reply_on_the_virtual_clock():
    """The first word comes after 0.5 s and min_tokens is 1: the observation falls in the 0.5 s bucket."""
    ref, metrics = reference(), GatewayMetrics()
    deliver(ref, metrics, "late words")
    m = registry_scrape(metrics)
    assert m("hermes_delivery_first_text_seconds_bucket", platform="reference", le="0.25") == 0
    assert m("hermes_delivery_first_text_seconds_bucket", platform="reference", le="0.75") == 1


def test_platform_connected_is_what_each_client_reported_and_absent_when_it_reports_nothing():
    from prometheus_client import generate_latest

    from hermes_gateway._core.platform_status import PlatformStatuses

    statuses = PlatformStatuses()
    metrics = GatewayMetrics(status=statuses)
    for name in ("telegram", "discord", "web"):
        statuses.starting(name)
        statuses.started(name)
    statuses.report("telegram", True, None)
    statuses.report("discord", False, "the gateway websocket closed")

    def samples():
        return sorted(line for line in generate_latest(metrics.registry).decode().splitlines()
                      if line.startswith("hermes_platform_connected{"))

    assert samples() == ['hermes_platform_connected{platform="discord"} 0.0',
                         'hermes_platform_connected{platform="telegram"} 1.0']  # web reports nothing: not guessed
    statuses.stopped("telegram")
    assert 'hermes_platform_connected{platform="telegram"} 0.0' in samples()
