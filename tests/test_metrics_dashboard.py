"""The Grafana dashboard in docs/ asks only for series that ``/metrics`` really exposes, with labels it really has.

A gateway with the API server and a reference chat answers a reply (with
one injected 429, so every delivery family has samples); its ``/metrics``
is read over HTTP; then every query of the dashboard is checked against
what was read. Renaming a metric or a label without the dashboard fails
here, so the dashboard cannot rot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from hermes_gateway import RateBudget
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import Fault, ReferencePlatform

DASHBOARD = Path(__file__).resolve().parents[1] / "docs" / "grafana" / "hermes-gateway.json"
#: What issue 14's "Operating it" asks the dashboard to show.
OPERATING = ("hermes_delivery_calls_total", "hermes_delivery_rate_limited_total",
             "hermes_delivery_rate_limit_wait_seconds_total", "hermes_delivery_first_text_seconds_bucket",
             "hermes_delivery_final_latency_seconds_bucket", "hermes_delivery_replies_in_flight",
             "hermes_inbound_dedupe_hits_total", "hermes_coordination_lease_takeovers_total")
#: Labels Prometheus adds to every scraped series, and the one histogram_quantile needs.
SCRAPE_LABELS = {"instance", "job", "le"}


async def exposed() -> dict[str, set[str]]:
    """Each series name ``/metrics`` exposes, with the labels its samples carry."""
    ref = ReferencePlatform("reference", budgets={"default": RateBudget(rate=50, burst=10)})
    ref.chat("1").fail_next(Fault.rate_limited(0.1, on="send"))
    config = parse_config({"model": {"demo": {"tokens_per_second": 0}}, "api_server": {"port": 0},
                           "streaming": {"reference": {"enabled": True, "edit_interval": 0.05, "min_tokens": 1}},
                           "platforms": {"reference": {"enabled": True}}}, env={})
    plugins = make_plugins(builtins=("hermes_gateway._core.api_server.plugin",), load_entry_points=False, extra=[ref])
    async with Gateway(config, plugins) as gateway:
        assert (await gateway.handle_incoming("reference", "1", "echo: one two three")).delivered
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{gateway.url}/metrics") as r:
                text = await r.text()
    series: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series.setdefault(sample.name, set()).update(sample.labels)
    return series


def queries(dashboard: dict) -> list[str]:
    """Every PromQL expression of the dashboard: panel targets and template variable queries."""
    found = []
    for panel in dashboard["panels"]:
        found += [target["expr"] for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        found.append(query["query"] if isinstance(query, dict) else query)
    return found


async def test_the_dashboard_asks_only_for_what_metrics_exposes():
    dashboard = json.loads(DASHBOARD.read_text())
    series = await exposed()
    used: set[str] = set()
    for expr in queries(dashboard):
        assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}"), expr
        names = set(re.findall(r"\bhermes_[a-z0-9_]+", expr))
        assert names, f"a query on no hermes metric: {expr}"
        for name in names:
            assert name in series, f"the dashboard queries {name}, which /metrics does not expose: {expr}"
        labels = set(SCRAPE_LABELS)
        for name in names:
            labels |= series[name]
        wanted = set(re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr))
        wanted = {label.strip() for group in wanted for label in group.split(",") if label.strip()}
        wanted |= set(re.findall(r"([a-z_]+)\s*=~?", expr))
        wanted |= set(re.findall(r"label_values\([a-z0-9_]+,\s*([a-z_]+)\)", expr))
        assert wanted <= labels, f"labels {wanted - labels} are not on {names}: {expr}"
        used |= names
    missing = [name for name in OPERATING if name not in used]
    assert not missing, f"the dashboard shows nothing of {missing}"


def test_the_dashboard_imports_with_a_prometheus_datasource_input():
    dashboard = json.loads(DASHBOARD.read_text())
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    assert dashboard["__inputs"][0]["pluginId"] == "prometheus"
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
        assert all(t["datasource"]["uid"] == "${DS_PROMETHEUS}" for t in panel["targets"]), panel["title"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    titles = " ".join(panel["title"] for panel in dashboard["panels"])
    for shown in ("by outcome", "429s by scope", "waiting", "first visible text", "final", "in flight", "dedupe",
                  "Lease takeovers"):
        assert shown in titles, shown
