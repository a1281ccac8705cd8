"""CPU cost per delta of the delivery core (run by hand: ``python bench/bench_delivery.py``).

10,000 word-sized deltas go through a StreamSession into the in-memory
reference platform on a virtual-time loop (so pacing waits cost nothing
and only CPU is measured). The baseline feeds the same deltas, with the
same event-loop yields, into a plain list. Medians of several runs.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.delivery import Delivery
from hermes_gateway.testing import ReferencePlatform, run_virtual

DELTAS = 10_000
RUNS = 7
WORDS = [f"word{i % 97} " if i % 50 else "end.\n\n" for i in range(DELTAS)]


def scenario(name: str, settings: StreamSettings, budget: RateBudget, limit: int = 4096, *, metrics: bool = False):
    async def main() -> None:
        ref = ReferencePlatform(max_message_length=limit, length_unit="utf16", budgets={"default": budget})
        observer = None
        if metrics:  # what a Gateway passes: every call counted, first text and final latency timed
            from hermes_gateway._core.metrics import GatewayMetrics
            observer = GatewayMetrics()
        session = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref]), observer=observer).session(
            "reference", "c", settings=settings)
        for w in WORDS:
            session.feed(w)
            await asyncio.sleep(0.01)
        report = await session.finish()
        assert report.delivered
        scenario.calls = report.calls  # type: ignore[attr-defined]
    return name, main


async def baseline_main() -> None:
    sink: list[str] = []
    for w in WORDS:
        sink.append(w)
        await asyncio.sleep(0.01)


def cpu_us_per_delta(main) -> float:
    start = time.process_time()
    run_virtual(main())
    return (time.process_time() - start) / DELTAS * 1e6


def main() -> None:
    cases = [
        scenario("telegram private (1.5 s edits, 1/s)", StreamSettings(True, 1.5, 20), RateBudget(1.0, 1)),
        scenario("telegram group (20/min, burst 3)", StreamSettings(True, 1.5, 20), RateBudget(20 / 60, 3)),
        scenario("no pacing at all (edit on every delta)", StreamSettings(True, 0.0, 0), RateBudget(1e6, 10**6)),
        scenario("streaming off (one final send)", StreamSettings(False), RateBudget(1.0, 1)),
        scenario("telegram private, with /metrics observer", StreamSettings(True, 1.5, 20), RateBudget(1.0, 1),
                 metrics=True),
        scenario("no pacing, with /metrics observer", StreamSettings(True, 0.0, 0), RateBudget(1e6, 10**6),
                 metrics=True),
    ]
    base = statistics.median(cpu_us_per_delta(baseline_main) for _ in range(RUNS))
    print(f"{DELTAS} deltas, median of {RUNS} runs, CPU time (time.process_time)")
    print(f"{'case':42} {'µs/delta':>9} {'minus baseline':>15} {'ratio':>6} {'calls':>6}")
    print(f"{'baseline: list.append + loop yield':42} {base:9.2f} {'':>15} {1.0:6.2f}")
    for name, case in cases:
        median = statistics.median(cpu_us_per_delta(case) for _ in range(RUNS))
        print(f"{name:42} {median:9.2f} {median - base:15.2f} {median / base:6.2f} {scenario.calls:6}")


if __name__ == "__main__":
    main()
