"""Prometheus text the operator scrapes."""

from hermes_gateway.api_server.metrics import Metrics


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
    assert 'hermes_api_requests_total{route="chat_completions",status="200"} 2' in text
    assert 'hermes_api_requests_total{route="responses",status="401"} 1' in text
    assert "hermes_api_active_streams 3" in text
    assert "hermes_api_deltas_total 42" in text
    assert 'hermes_api_errors_total{kind="client_disconnect"} 1' in text
    assert 'hermes_api_time_to_first_token_seconds_bucket{le="0.005"} 1' in text
    assert 'hermes_api_time_to_first_token_seconds_bucket{le="0.25"} 2' in text
    assert 'hermes_api_time_to_first_token_seconds_bucket{le="+Inf"} 2' in text
    assert "hermes_api_time_to_first_token_seconds_count 2" in text
    for line in text.splitlines():  # every sample line is "name{labels} value"
        if not line.startswith("#"):
            float(line.rsplit(" ", 1)[1])


def test_platform_plugins_count_their_webhook_events():
    m = Metrics()
    m.platform_event("whatsapp", "status_delivered")
    m.platform_event("whatsapp", "status_delivered")
    m.platform_event("whatsapp", "bad_signature")
    text = m.render()
    assert "# TYPE hermes_platform_events_total counter" in text
    assert 'hermes_platform_events_total{platform="whatsapp",event="status_delivered"} 2' in text
    assert 'hermes_platform_events_total{platform="whatsapp",event="bad_signature"} 1' in text
