"""``hermes-gateway schedules``: each schedule with its rule, where it goes, its next run and its last run."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

from hermes_gateway._core.store import SQLiteStore


def schedules(tmp_path, config: str) -> subprocess.CompletedProcess:
    path = tmp_path / "config.yaml"
    path.write_text(config)
    return subprocess.run([sys.executable, "-m", "hermes_gateway", "schedules", "--config", str(path)],
                          capture_output=True, text=True, timeout=60)


def test_each_schedule_is_listed_with_its_next_and_last_run(tmp_path):
    db = tmp_path / "state.db"

    async def ran_before():
        store = SQLiteStore(db)
        await store.claim_schedule_run("tick", 1_767_225_600.0)   # 2026-01-01 00:00 UTC
        await store.close()
    asyncio.run(ran_before())
    result = schedules(tmp_path, f"store: {{path: {db}}}\nschedules:\n"
                                 "  - {name: morning, cron: '0 8 * * 1-5', timezone: Europe/Berlin,"
                                 " platform: telegram, chat: home, prompt: Summarise the news, conversation: chat}\n"
                                 "  - {name: tick, every: 30m, platform: slack, chat: C1, thread: '17.1', text: tick}\n")
    assert result.returncode == 0, result.stderr
    header, morning, tick = result.stdout.splitlines()
    assert header.split() == ["NAME", "WHEN", "WHERE", "WHAT", "NEXT", "RUN", "LAST", "RUN"]
    assert re.fullmatch(r"morning +cron 0 8 \* \* 1-5 \(Europe/Berlin\) +telegram:home +prompt \(chat\) +"
                        r"\d{4}-\d\d-\d\d 08:00 CE[S]?T +never", morning), morning
    assert re.fullmatch(r"tick +every 30m +slack:C1/17\.1 +text +\d{4}-\d\d-\d\d \d\d:[03]0 UTC +"
                        r"2026-01-01 00:00 UTC", tick), tick


def test_no_schedules_says_so(tmp_path):
    result = schedules(tmp_path, "model: {name: demo}\n")
    assert result.returncode == 0 and result.stdout.startswith("no schedules in ")


def test_a_bad_cron_is_one_line_naming_the_key(tmp_path):
    result = schedules(tmp_path, "schedules:\n  - {name: x, cron: '61 * * * *', platform: p, chat: c, text: t}\n")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("schedules[0].cron: a cron expression of 5 fields (minute hour day month "
                                          "weekday), got '61 * * * *'")
    assert len(result.stderr.strip().splitlines()) == 1
