"""Instructions per delta of the delivery core, counted by callgrind (deterministic; run by hand).

    .venv/bin/python bench/bench_delivery_instructions.py [--deltas 2000] [--case no-pacing] [--src OLD_TREE]

Runs one scenario of ``bench_delivery.py`` (deltas into a StreamSession and the
in-memory reference platform, on a virtual-time loop) under
``valgrind --tool=callgrind`` twice — with the deltas and with none — and
prints the difference divided by the number of deltas: the core's cost per
delta without the interpreter's start-up. ``--src`` runs another source tree's
``hermes_gateway`` (e.g. ``git archive REV hermes_gateway | tar -x -C /tmp/old``)
for a before/after in the same go. On this shared machine the wall clock
confirms only changes of 20% or more; instruction counts repeat to 0.1%.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

CHILD = r'''
import asyncio, sys
from hermes_gateway import RateBudget, StreamSettings, make_plugins
try:
    from hermes_gateway._core.delivery import Delivery
except ImportError:  # a tree from before the private package
    from hermes_gateway.delivery import Delivery
from hermes_gateway.testing import ReferencePlatform, run_virtual

deltas, case = int(sys.argv[1]), sys.argv[2]
settings, budget = {
    "telegram-private": (StreamSettings(True, 1.5, 20), RateBudget(1.0, 1)),
    "no-pacing": (StreamSettings(True, 0.0, 0), RateBudget(1e6, 10**6)),
    "streaming-off": (StreamSettings(False), RateBudget(1.0, 1)),
}[case]
words = [f"word{i % 97} " if i % 50 else "end.\n\n" for i in range(deltas)]

async def main():
    ref = ReferencePlatform(max_message_length=4096, length_unit="utf16", budgets={"default": budget})
    session = Delivery(make_plugins(builtins=(), load_entry_points=False, extra=[ref])).session(
        "reference", "c", settings=settings)
    for w in words:
        session.feed(w)
        await asyncio.sleep(0.01)
    report = await session.finish()
    assert report.delivered or deltas == 0

run_virtual(main())
'''


def instructions(deltas: int, case: str, src: str | None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = {**os.environ, "HERMES_LOAD_PLUGINS": ""}
        if src:
            env["PYTHONPATH"] = src
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", CHILD,
                        str(deltas), case], env=env, check=True, capture_output=True)
        with open(out) as f:
            summary = re.search(r"^summary: (\d+)", f.read(), re.M)
        assert summary, "callgrind wrote no summary"
        return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--case", default="no-pacing", choices=["telegram-private", "no-pacing", "streaming-off"])
    parser.add_argument("--src", help="run this source tree's hermes_gateway instead of the installed one")
    args = parser.parse_args()
    full = instructions(args.deltas, args.case, args.src)
    empty = instructions(0, args.case, args.src)
    print(f"{args.case}: {(full - empty) / args.deltas / 1000:.2f} k instructions per delta "
          f"({args.deltas} deltas{', ' + args.src if args.src else ''})")


if __name__ == "__main__":
    main()
