"""``hermes-gateway schedules``: each configured schedule, when it runs, its next run and its last one.

Reads the store the config names for the last runs, never creating it (a
gateway that never ran has none). The next run is computed from now, in the
schedule's own time zone.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from ..config import Config, load_config
from ..outbound.timing import local_time, next_after
from ..store import MEMORY, StoreError, is_server_store, open_store, store_location


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    schedules = config.outbound.schedules
    if not schedules:
        print(f"no schedules in {config.source} (add a schedules: list; see docs/outbound.md)")
        return 0
    last = asyncio.run(_last_runs(config))
    now = time.time()
    rows = [("NAME", "WHEN", "WHERE", "WHAT", "NEXT RUN", "LAST RUN")]
    for s in schedules:
        where = f"{s.platform}:{s.chat}" + (f"/{s.thread}" if s.thread else "")
        what = f"prompt ({s.conversation})" if s.prompt is not None else "text"
        previous = last.get(s.name)
        rows.append((s.name, s.when, where, what, local_time(next_after(s, now), s.timezone),
                     local_time(previous, s.timezone) if previous is not None else "never"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


async def _last_runs(config: Config) -> dict[str, float]:
    """Each schedule's recorded last run; none when the store does not exist yet."""
    location = store_location(config)
    if location == MEMORY or (not is_server_store(config) and not Path(location).exists()):
        return {}
    store = open_store(config)
    try:
        found = {}
        for schedule in config.outbound.schedules:
            at = await store.schedule_last_run(schedule.name)
            if at is not None:
                found[schedule.name] = at
        return found
    except StoreError:
        raise
    finally:
        await store.close()
