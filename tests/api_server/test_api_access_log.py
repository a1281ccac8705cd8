"""The access log (issue 13): one line per request with method, path, status, time to first token and
duration; never a body, a query string or a key; off by default, on with ``hermes-gateway -v run``."""

from __future__ import annotations

import logging
import re
import time

import aiohttp
import pytest

from api_helpers import MODEL, gateway_config, running_gateway
from hostile_helpers import post_json, request, served_gateway

KEY = "sk-access-log-secret"
LINE = re.compile(r"^(?P<method>[A-Z]+) (?P<path>\S+) (?P<status>\d{3}) ttft=(?P<ttft>-|[\d.]+ms) "
                  r"duration=(?P<duration>[\d.]+)ms$")


def access_lines(caplog) -> list[re.Match]:
    lines = [r.getMessage() for r in caplog.records if r.name == "hermes_gateway.access"]
    matches = [LINE.match(line) for line in lines]
    assert all(matches), lines
    return matches  # type: ignore[return-value]


async def test_one_line_per_request_with_status_ttft_and_duration_and_nothing_secret(caplog):
    caplog.set_level(logging.INFO, logger="hermes_gateway.access")
    async with running_gateway(gateway_config(api={"api_keys": [KEY]})) as gw:
        auth = {"Authorization": f"Bearer {KEY}"}
        async with aiohttp.ClientSession(headers=auth) as s:
            body = {"model": MODEL, "messages": [{"role": "user", "content": "echo: private words"}], "stream": True}
            async with s.post(f"{gw.url}/v1/chat/completions?token=q-secret", json=body) as r:
                await r.read()
            async with s.post(f"{gw.url}/v1/chat/completions", json={**body, "stream": False}) as r:
                await r.read()
            async with s.get(f"{gw.url}/v1/models", headers={"Authorization": "Bearer wrong-key"}) as r:
                assert r.status == 401
            async with s.get(f"{gw.url}/nowhere") as r:
                assert r.status == 404
    lines = access_lines(caplog)
    seen = [(m["method"], m["path"], m["status"]) for m in lines]
    assert seen == [("POST", "/v1/chat/completions", "200"), ("POST", "/v1/chat/completions", "200"),
                    ("GET", "/v1/models", "401"), ("GET", "/nowhere", "404")]
    assert lines[0]["ttft"] != "-" and float(lines[0]["ttft"][:-2]) <= float(lines[0]["duration"])
    assert lines[2]["ttft"] == "-"
    text = "\n".join(r.getMessage() for r in caplog.records)
    for secret in (KEY, "wrong-key", "q-secret", "private words"):
        assert secret not in text


async def test_off_by_default(caplog):
    caplog.set_level(logging.WARNING)
    async with running_gateway(gateway_config()) as gw:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{gw.url}/v1/models") as r:
                assert r.status == 200
    assert not [r for r in caplog.records if r.name == "hermes_gateway.access"]


@pytest.mark.parametrize("args, logged", [((), False), (("-v",), True)])
def test_run_logs_access_lines_only_with_v(tmp_path, args, logged):
    config = {"api_server": {"port": 0}, "model": {"demo": {"tokens_per_second": 0}}}
    with served_gateway(tmp_path, config, args=args) as gw:
        assert post_json(gw, "/v1/chat/completions", {"model": MODEL, "messages": [
            {"role": "user", "content": "echo: hi"}], "stream": True}).status == 200
        assert request(gw, "GET", "/health").status == 200
        time.sleep(0.2)
        err = gw.stderr()
    assert ("POST /v1/chat/completions 200 ttft=" in err) is logged
    assert ("GET /health 200 ttft=- duration=" in err) is logged
