"""Prometheus text the operator scrapes (read back with prometheus_client's own parser, as Prometheus would)."""

from prometheus_client.parser import text_string_to_metric_families

from hermes_gateway._core.api_server.metrics import Metrics


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample in ``text``: (name, labels) → value; label order does not matter to Prometheus."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_render_has_every_family_with_values():
    m = Metrics()
    m.request("chat_completions", 200)
    m.request("chat_completions", 200)
    m.request("responses", 401)
    m.error("client_disconnect")
    m.active_streams = 3
    m.deltas = 42
    m.ttft.observe(0.003)
    m.ttft.observe(0.2)
    text = m.render()
    got = samples(text)
    assert got[("hermes_api_requests_total", frozenset({("route", "chat_completions"), ("status", "200")}))] == 2
    assert got[("hermes_api_requests_total", frozenset({("route", "responses"), ("status", "401")}))] == 1
    assert got[("hermes_api_active_streams", frozenset())] == 3
    assert got[("hermes_api_deltas_total", frozenset())] == 42
    assert got[("hermes_api_errors_total", frozenset({("kind", "client_disconnect")}))] == 1
    bucket = "hermes_api_time_to_first_token_seconds_bucket"
    assert got[(bucket, frozenset({("le", "0.005")}))] == 1
    assert got[(bucket, frozenset({("le", "0.25")}))] == 2
    assert got[(bucket, frozenset({("le", "+Inf")}))] == 2
    assert got[("hermes_api_time_to_first_token_seconds_count", frozenset())] == 2
    for name in ("hermes_api_requests_total", "hermes_api_active_streams", "hermes_api_deltas_total",
                 "hermes_api_errors_total", "hermes_api_time_to_first_token_seconds"):
        assert f"# TYPE {name} " in text, name


def test_two_servers_in_one_process_count_apart():
    """Each Metrics has its own registry (no process-wide one): many gateways run in one test process."""
    a, b = Metrics(), Metrics()
    a.request("models", 200)
    assert ("hermes_api_requests_total", frozenset({("route", "models"), ("status", "200")})) in samples(a.render())
    assert not any(name == "hermes_api_requests_total" for name, _ in samples(b.render()))
