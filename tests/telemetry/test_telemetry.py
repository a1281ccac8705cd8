"""The traces' tiny API: nothing at all when off (no OpenTelemetry imported, the very same awaitables back),
nothing exported for a turn the sampler leaves out."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap



from hermes_gateway import Incoming
from hermes_gateway._core import telemetry
from hermes_gateway.testing import ReferencePlatform, TestGateway

#: A gateway with the API server and the reference platform, one turn and one API request, telemetry unset;
#: then every module of OpenTelemetry the process imported.
OFF_SCRIPT = textwrap.dedent('''
    import asyncio, json, sys
    import aiohttp
    from hermes_gateway import Incoming
    from hermes_gateway.testing import ReferencePlatform, TestGateway

    async def main():
        cfg = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}}}
        async with TestGateway(cfg, ReferencePlatform(), api_server=True) as gateway:
            report = await gateway.receive(Incoming(platform="reference", chat_id="c", text="echo: hi"))
            assert report.delivered, report
            async with aiohttp.ClientSession() as http:
                async with http.post(gateway.url + "/v1/chat/completions", json={
                        "model": "hermes-gateway", "messages": [{"role": "user", "content": "echo: hi"}]}) as r:
                    assert r.status == 200, await r.text()
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")))

    asyncio.run(main())
''')


def test_with_the_endpoint_unset_no_opentelemetry_module_is_imported(tmp_path):
    env = {**os.environ, "HERMES_HOME": str(tmp_path), "HERMES_LOAD_PLUGINS": ""}
    env.pop("HERMES_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", OFF_SCRIPT], env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


async def test_when_off_every_call_gets_back_what_it_handed_in():
    """No wrapper, no span object, no allocation: the delivery core's calls cost one check each."""
    assert telemetry._tracing is None

    async def call() -> str:
        return "done"

    async def events():
        yield "event"

    for wrap in (lambda c: telemetry.platform_call(c, "on_delta"), lambda c: telemetry.tool_call(c, "calculate"),
                 telemetry.final, lambda c: telemetry.turn(c, [], [])):
        coroutine = call()
        assert wrap(coroutine) is coroutine
        assert await coroutine == "done"
    source = events()
    assert telemetry.upstream_call(source, None, "demo") is source
    await source.aclose()
    assert telemetry.trace_id() is None


async def test_a_sample_ratio_of_0_exports_nothing(otlp):
    async def one_turn(ratio: float) -> None:
        cfg = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
               "telemetry": {"otlp_endpoint": otlp.url, "sample_ratio": ratio}}
        async with TestGateway(cfg, ReferencePlatform()) as gateway:
            report = await gateway.receive(Incoming(platform="reference", chat_id="c", text="echo: hi"))
            assert report.delivered
            assert telemetry.trace_id() is None  # outside the turn

    await one_turn(0)
    assert (otlp.requests, otlp.spans) == (0, [])
    await one_turn(1)  # the same turn, sampled: it is exported (so the 0 above is the sampler's doing)
    assert {s.name for s in otlp.spans} >= {"turn", "receive", "queue wait", "upstream call", "final",
                                            "platform call"}
