"""How much the terminal renderer costs per token, and how many terminal writes it makes.

Run by hand: ``.venv/bin/python bench/bench_cli_render.py``. Feeds a long
reply as fast as an event loop can (worst case: no model latency to hide
behind) and at a realistic 100 tokens/s, through the real prompt_toolkit
output into a string buffer. Prints medians of several runs.
"""

from __future__ import annotations

import asyncio
import io
import statistics
import time

from prompt_toolkit.data_structures import Size
from prompt_toolkit.output.vt100 import Vt100_Output

from hermes_gateway._core.cli.render import RenderOptions, ReplyRenderer
from hermes_gateway._core.cli.sinks import TerminalSink
from hermes_gateway._core.events import TextDelta, TurnEnd

RUNS = 5


class Counting(io.StringIO):
    writes = 0

    def write(self, s):
        self.writes += 1
        return super().write(s)


async def one_run(tokens: int, rate: float | None) -> tuple[float, int, float]:
    stream = Counting()
    output = Vt100_Output(stream, lambda: Size(rows=40, columns=100), term="xterm")
    sink = TerminalSink(output)
    words = [f" word{i}" if i % 12 else "\n\nword" for i in range(tokens)]

    async def events():
        for w in words:
            if rate:
                await asyncio.sleep(1 / rate)
            else:
                await asyncio.sleep(0)
            yield TextDelta(w)
        yield TurnEnd(reply="".join(words).strip())

    renderer = ReplyRenderer(sink, sink, RenderOptions())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await renderer.render(events())
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return cpu / tokens * 1e6, stream.writes, wall


def main() -> None:
    for tokens, rate in ((20000, None), (300, 100.0)):
        runs = [asyncio.run(one_run(tokens, rate)) for _ in range(RUNS)]
        per_token = statistics.median(r[0] for r in runs)
        writes = statistics.median(r[1] for r in runs)
        wall = statistics.median(r[2] for r in runs)
        label = "as fast as possible" if rate is None else f"{rate:g} tokens/s"
        print(f"{tokens} tokens, {label}: median CPU {per_token:.1f} µs/token, "
              f"{writes:.0f} terminal writes ({writes / wall:.1f}/s) over {wall:.2f} s")


if __name__ == "__main__":
    main()
