"""Helpers shared by the delivery tests (a module with a unique name, not a conftest)."""

from __future__ import annotations

import asyncio
from typing import Iterable

from hermes_gateway import StreamSettings, make_plugins
from hermes_gateway._core.delivery import Delivery, DeliveryPolicy
from hermes_gateway.testing import ReferencePlatform


def make_delivery(ref: ReferencePlatform, policy: DeliveryPolicy | None = None) -> Delivery:
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    assert not plugins.problems
    return Delivery(plugins, policy=policy)


def streaming(edit_interval: float = 1.0, min_tokens: int = 1, cursor: str = " ▌") -> StreamSettings:
    return StreamSettings(enabled=True, edit_interval=edit_interval, min_tokens=min_tokens, cursor=cursor)


async def feed_over(session, chunks: Iterable[str], seconds: float) -> None:
    """Feed ``chunks`` evenly over ``seconds`` of (virtual) time."""
    chunks = list(chunks)
    gap = seconds / max(len(chunks), 1)
    for chunk in chunks:
        session.feed(chunk)
        await asyncio.sleep(gap)


def words(text: str) -> list[str]:
    """Split text into word-sized deltas that join back exactly."""
    out, current = [], ""
    for ch in text:
        current += ch
        if ch == " ":
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out
