"""Time to the first byte and to the end of ``hermes-gateway chat -m`` with the demo model.

Run by hand: ``.venv/bin/python bench/bench_cli_oneshot.py``. Each run is a
fresh process (what a script pays): interpreter start, imports, config,
the agent, one streamed turn. Prints medians of several runs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
MESSAGE = "echo: " + " ".join(f"word{i}" for i in range(100))


def one_run(config: Path) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hermes_gateway", "chat", "--config", str(config),
                             "-m", MESSAGE], stdout=subprocess.PIPE)
    first = os.read(proc.stdout.fileno(), 1)
    first_at = time.perf_counter() - started
    rest = proc.stdout.read()
    proc.wait()
    assert proc.returncode == 0 and (first + rest).startswith(b"word0")
    return first_at, time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for tps in (0, 100):
            config = Path(tmp) / f"config-{tps}.yaml"
            config.write_text(f"model:\n  demo:\n    tokens_per_second: {tps}\nstreaming:\n  cli: true\n")
            runs = [one_run(config) for _ in range(RUNS)]
            first = statistics.median(r[0] for r in runs)
            total = statistics.median(r[1] for r in runs)
            pace = "as fast as possible" if tps == 0 else f"{tps} tokens/s"
            print(f"chat -m, 100-word reply, demo model {pace}: median first byte {first * 1000:.0f} ms, "
                  f"median total {total * 1000:.0f} ms ({RUNS} runs)")


if __name__ == "__main__":
    main()
