"""``Delivery.in_flight``: the replies being delivered now, each with its start time and its calls so far."""

from __future__ import annotations

import asyncio
import time

from delivery_helpers import feed_over, make_delivery, streaming, words

from hermes_gateway import RateBudget
from hermes_gateway.testing import ReferencePlatform, run_virtual

REPLY = "A reply the dashboard lists while it streams, with the platform calls it has made so far."


def test_a_started_reply_is_listed_with_its_calls_until_it_is_done():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50.0, burst=10)})

    async def main():
        delivery = make_delivery(ref)
        made = delivery.session("reference", "c", settings=streaming(0.5))
        assert delivery.in_flight() == [], "made, not started: not in flight"
        before = time.time()
        feeding = asyncio.ensure_future(feed_over(made, words(REPLY), 5.0))
        await asyncio.sleep(2.5)
        [listed] = delivery.in_flight()
        assert listed is made and before <= (made.started_at or 0) <= time.time()
        assert made.calls == len(ref.chat("c").calls) >= 1
        halfway = made.calls
        await feeding
        report = await made.finish()
        assert delivery.in_flight() == [] and report.calls == made.calls > halfway
        return report

    run_virtual(main())
    assert ref.chat("c").screen == [REPLY]
