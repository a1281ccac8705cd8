"""A platform's own small values, on every backend: memory, SQLite and a real PostgreSQL.

What a plugin stores (a sync position) survives a restart (a reopened store), is the same for two replicas
on one database, is per platform instance, and stays within the per-platform total even when two replicas
write at once.
"""

from __future__ import annotations

import asyncio






async def test_a_value_is_kept_per_platform_and_survives_a_reopen(make_store):
    store = make_store()
    try:
        assert await store.platform_value("matrix", "since") is None
        assert await store.set_platform_value("matrix", "since", '"s72594_4483_1934"', 1000) is True
        assert await store.set_platform_value("matrix_sales", "since", '"s1_1_1"', 1000) is True
        assert await store.set_platform_value("matrix", "since", '"s72595_4483_1934"', 1000) is True  # replaced
    finally:
        await store.close()
    reopened = make_store()
    try:
        assert await reopened.platform_value("matrix", "since") == '"s72595_4483_1934"'
        assert await reopened.platform_value("matrix_sales", "since") == '"s1_1_1"'
        assert await reopened.delete_platform_value("matrix", "since") is True
        assert await reopened.delete_platform_value("matrix", "since") is False
        assert await reopened.platform_value("matrix", "since") is None
    finally:
        await reopened.close()


async def test_the_platform_total_is_kept_and_a_refused_write_stores_nothing(make_store):
    store = make_store()
    try:
        assert await store.set_platform_value("p", "a", "x" * 60, 100) is True
        assert await store.set_platform_value("p", "b", "y" * 50, 100) is False  # 110 > 100
        assert await store.platform_value("p", "b") is None
        assert await store.set_platform_value("p", "a", "z" * 100, 100) is True  # a replaced value counts once
        assert await store.set_platform_value("q", "b", "y" * 50, 100) is True  # another platform's own total
    finally:
        await store.close()


async def test_two_replicas_writing_at_once_stay_within_the_total(make_store):
    stores = [make_store(), make_store()]
    try:
        results = await asyncio.gather(*(s.set_platform_value("p", f"k{i}", "v" * 60, 100)
                                         for i, s in enumerate(stores)))
        assert sorted(results) == [False, True]
    finally:
        for s in stores:
            await s.close()
