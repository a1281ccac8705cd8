"""The session tells its observer about every platform call it makes, and nothing needs Prometheus for that."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable

from delivery_helpers import feed_over, streaming, words

from hermes_gateway import RateBudget, make_plugins
from hermes_gateway._core.delivery import Delivery
from hermes_gateway._core.errors import DeliveryError
from hermes_gateway.testing import Fault, ReferencePlatform, run_virtual

REPLY = "Every call the core makes shows up here, once, with how the platform answered it."


class Recorder:
    """A ``DeliveryObserver`` that writes down what it is told, in order."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def reply(self, platform: str) -> "Recorder":
        self.log.append(("reply", platform))
        return self

    def started(self) -> None:
        self.log.append(("started",))

    async def call(self, method: str, text: str, call: Awaitable[Any]) -> Any:
        try:
            result = await call
        except DeliveryError as exc:
            self.log.append(("call", method, type(exc).__name__))
            raise
        self.log.append(("call", method, "ok"))
        return result

    def finishing(self) -> None:
        self.log.append(("finishing",))

    def ended(self, report: Any) -> None:
        self.log.append(("ended", report.delivered))


def test_every_platform_call_is_reported_once_between_start_and_end():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50.0, burst=10)})
    ref.chat("c").fail_next(Fault.rate_limited(2.0, on="edit"))
    recorder = Recorder()

    async def main():
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
        session = Delivery(plugins, observer=recorder).session("reference", "c", settings=streaming(0.5))
        await feed_over(session, words(REPLY), 5.0)
        return await session.finish()

    report = run_virtual(main())
    assert ref.chat("c").screen == [REPLY] and report.delivered
    log = recorder.log
    assert log[:2] == [("reply", "reference"), ("started",)] and log[-1] == ("ended", True)
    calls = [entry for entry in log if entry[0] == "call"]
    seen = [(c.hook, "RateLimited" if c.outcome == "rate_limited" else "ok") for c in ref.chat("c").calls]
    assert [(method, outcome) for _, method, outcome in calls] == seen, "one report per call, in order"
    assert ("call", "on_delta", "RateLimited") in calls
    finishing = log.index(("finishing",))
    assert log[finishing + 1:-1] and all(entry[1] == "on_stream_end" for entry in log[finishing + 1:-1]), \
        "after the model finished, only final calls"


def test_without_an_observer_the_session_delivers_the_same():
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50.0, burst=10)})

    async def main():
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
        session = Delivery(plugins).session("reference", "c", settings=streaming(0.5))
        await feed_over(session, words(REPLY), 5.0)
        await asyncio.sleep(0)
        return await session.finish()

    assert run_virtual(main()).delivered and ref.chat("c").screen == [REPLY]
