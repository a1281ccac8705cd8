"""Status reactions and a reply's first text: when each lands (run by hand; issues 24 and 35).

    .venv/bin/python bench/bench_reactions_first_text.py

Virtual clock, the whole gateway (inbound runtime, reactor, delivery core),
the demo model answering ``think: …`` (a hidden think block, then the
text: silence before the first words, longer at fewer tokens per second)
on a reference platform that can react. For Telegram's private budget (1
call per 1.05 s, burst 1) and a group's (19/min, burst 3), and each model
speed, the seconds from the message to its reply's first text, with
reactions off ("before") and ``received/done`` on ("after"), and when the
👀 and the 👍 landed. Deterministic: seconds are the person's, not CPU.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

from hermes_gateway import Incoming, RateBudget
from hermes_gateway.testing import ReferencePlatform, TestGateway, run_virtual
from hermes_gateway._core.builtin.reference_platform import _Receiving

PRIVATE = RateBudget(rate=1 / 1.05, burst=1)
GROUP = RateBudget(rate=19 / 60, burst=3)
SPEEDS = (4, 8, 16, 32, 64)  # demo tokens per second: the think block is ~30 tokens of silence


class Reacting(ReferencePlatform):
    """The reference platform with a ``react`` client method; notes the first text and each reaction."""

    def __init__(self, budget: RateBudget) -> None:
        super().__init__("reference", budgets={"default": budget})
        self.first_text: float | None = None
        self.reactions: dict[str, float] = {}
        self.on_call = self._note

    def _note(self, chat: Any, call: Any) -> None:
        if call.hook != "on_stream_start" and self.first_text is None:
            self.first_text = asyncio.get_running_loop().time()

    def _connect(self, settings: Any, context: Any) -> Any:
        platform = self

        class Client(_Receiving):
            async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
                platform.reactions.setdefault(emoji, asyncio.get_running_loop().time())
        return Client(self, context)


def one(budget: RateBudget, speed: int, reactions: bool) -> tuple[float, float | None, float | None]:
    """(first text, 👀, 👍) in seconds after the message arrived."""
    ref = Reacting(budget)
    out: dict[str, Any] = {}
    config: dict[str, Any] = {
        "model": {"demo": {"tokens_per_second": speed}},
        "streaming": {"reference": {"enabled": True, "edit_interval": 1.0, "min_tokens": 5}},
        "platforms": {"reference": {"enabled": True}},
    }
    if reactions:
        config["reactions"] = {"received": "👀", "done": "👍"}

    async def main() -> None:
        async with TestGateway(config, ref) as gateway:
            loop = asyncio.get_running_loop()
            start = loop.time()
            report = await gateway.receive(Incoming("reference", "1", "think: " + " ".join(["word"] * 20),
                                                    sender_id="p", update_id="m1", message_id="m1"))
            assert report is not None and report.delivered
            await asyncio.sleep(10)
            out["first"] = (ref.first_text or start) - start
            out["eyes"] = ref.reactions["👀"] - start if "👀" in ref.reactions else None
            out["done"] = ref.reactions["👍"] - start if "👍" in ref.reactions else None
    run_virtual(main())
    return out["first"], out["eyes"], out["done"]


def main() -> None:
    def show(x: float | None) -> str:
        return "  —  " if x is None else f"{x:5.2f}"

    for name, budget in (("private (1 call / 1.05 s, burst 1)", PRIVATE), ("group (19/min, burst 3)", GROUP)):
        print(name)
        print(f"  {'tokens/s':>8s} {'first text, before':>19s} {'after':>6s} {'👀 at':>6s} {'👍 at':>6s}")
        for speed in SPEEDS:
            before, _, _ = one(budget, speed, reactions=False)
            after, eyes, done = one(budget, speed, reactions=True)
            print(f"  {speed:8d} {before:18.2f}s {after:5.2f}s {show(eyes)}s {show(done)}s")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:  # the store of each run's gateway, not the user's
        os.environ["HERMES_HOME"] = home
        main()
