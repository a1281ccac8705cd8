"""``hermes-gateway run`` exempts its start-up heap from garbage collection, and still collects what comes later.

Why it matters is in ``hermes_gateway/_core/cli/heap.py`` (a full collection of the
start-up heap held the event loop for ~60 ms in the middle of a burst of
streams). Run in a child process: freezing is process-wide.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from cli_helpers import DEADLINE, child_env

CHILD = textwrap.dedent("""
    import asyncio, gc, os, signal, sys, weakref

    from hermes_gateway._core.cli import run as run_command
    from hermes_gateway._core.config import parse_config

    counts = []
    real_freeze = gc.freeze

    def freeze():  # record what run froze, then stop the server as Ctrl-C would
        real_freeze()
        counts.append(gc.get_freeze_count())
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGINT)

    gc.freeze = freeze
    config = parse_config({"api_server": {"port": 0}, "store": {"path": sys.argv[1]}}, env={})
    code = asyncio.run(run_command.serve(config))

    class Node:
        pass

    node = Node()
    node.itself = node  # a cycle made after start-up: only the collector can free it
    alive = weakref.ref(node)
    del node
    gc.collect()
    print(f"exit={code} frozen={counts} young={gc.get_threshold()[0]} later_cycle_collected={alive() is None}")
""")


def test_run_freezes_the_start_up_heap_once_and_still_collects_later_cycles(tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "state.db")], capture_output=True,
                          text=True, env=child_env(tmp_path / "home"), cwd=tmp_path, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("hermes-gateway: listening on http://127.0.0.1:")
    summary = lines[-1]
    frozen = summary.split("frozen=[")[1].split("]")[0]
    assert frozen.isdigit() and int(frozen) > 10_000, summary  # once, and the start-up heap is large
    assert " young=10000 " in summary, "the youngest generation collected every 10,000 objects, not 700 (issue 39)"
    assert summary.startswith("exit=0 ") and summary.endswith("later_cycle_collected=True"), summary
