"""Token usage: every turn recorded per conversation, user and model; ``/usage``; the footer; the CLI table.

A turn's usage is what the upstream reported (``usage`` on its answers,
summed over the turn's model calls), or the agent's estimate when it gave
none, marked ``estimated`` (shown with ``~``). Costs come from ``pricing:``
(per million input and output tokens, by model); a model without a price
has no cost, never a made-up one.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Iterable

from ..store import StoreError
from ..store.operator_records import UsageRecord
from ..store.outage import report as report_store_failure

log = logging.getLogger(__name__)


@dataclass
class Totals:
    """Summed usage of some records."""

    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    cost: float | None = None  # None: no record had a price

    def add(self, record: UsageRecord, cost: float | None) -> None:
        self.turns += 1
        self.input_tokens += record.input_tokens
        self.output_tokens += record.output_tokens
        self.estimated = self.estimated or record.estimated
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def price_of(config: Any, model: str) -> Any:
    """``pricing:`` for a model, by its ``models:`` key / shown name, or by the name it requests."""
    pricing = config.operator.usage.pricing
    if model in pricing:
        return pricing[model]
    from .profile import find_model

    found = find_model(config, model)
    return pricing.get(found[1].endpoint.name) if found else None


def cost_of(config: Any, model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = price_of(config, model)
    if price is None:
        return None
    return (input_tokens * price.input + output_tokens * price.output) / 1_000_000


def total(config: Any, records: Iterable[UsageRecord]) -> Totals:
    out = Totals()
    for record in records:
        out.add(record, cost_of(config, record.model, record.input_tokens, record.output_tokens))
    return out


def money(config: Any, amount: float) -> str:
    return f"{config.operator.usage.currency}{amount:.4f}" if amount < 1 else f"{config.operator.usage.currency}{amount:.2f}"


def describe(config: Any, totals: Totals) -> str:
    """``~1,234 tokens (1,000 in, 234 out) in 3 turns, $0.0012``."""
    mark = "~" if totals.estimated else ""
    text = (f"{mark}{totals.tokens:,} tokens ({totals.input_tokens:,} in, {totals.output_tokens:,} out) in "
            f"{totals.turns} turn{'' if totals.turns == 1 else 's'}")
    if totals.cost is not None:
        text += f", {money(config, totals.cost)}"
    return text


def footer(config: Any, model: str, usage: Any) -> str | None:
    """The one short line ``usage.footer`` appends to a final reply (None: off, or nothing to say)."""
    mode = config.operator.usage.footer
    if mode == "off" or usage is None:
        return None
    mark = "~" if usage.estimated else ""
    line = f"— {mark}{usage.prompt_tokens:,} in · {mark}{usage.completion_tokens:,} out"
    if mode == "cost":
        cost = cost_of(config, model, usage.prompt_tokens, usage.completion_tokens)
        if cost is not None:
            line += f" · {money(config, cost)}"
    return line


async def record_turn_usage(store: Any, incoming: Any, model: str, usage: Any) -> None:
    """Keep one turn's usage; a store that fails costs a log line, not the reply (which already went out)."""
    if usage is None:
        return
    record = UsageRecord(time.time(), incoming.platform, incoming.chat_id, incoming.thread_id,
                         incoming.sender_id or "", model, int(usage.prompt_tokens), int(usage.completion_tokens),
                         bool(usage.estimated))
    try:
        await store.record_usage(record)
    except StoreError as exc:
        report_store_failure(store, log, "usage not recorded", exc)


def start_of_day(now: float) -> float:
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))


def start_of_month(now: float) -> float:
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))


async def usage_text(config: Any, store: Any, incoming: Any, now: float | None = None) -> str:
    """What ``/usage`` answers: this conversation's and this user's totals, today and this month."""
    now = time.time() if now is None else now
    month = await store.usage(since=start_of_month(now))
    today = start_of_day(now)
    chat = [r for r in month if (r.platform, r.chat_id, r.thread_id) ==
            (incoming.platform, incoming.chat_id, incoming.thread_id)]
    mine = [r for r in month if (r.platform, r.user_id) == (incoming.platform, incoming.sender_id or "")]
    lines = ["Usage (~ marks estimates where the model reported none):"]
    for label, records in (("This chat", chat), ("You", mine)):
        lines.append(f"{label} today: {describe(config, total(config, (r for r in records if r.at >= today)))}")
        lines.append(f"{label} this month: {describe(config, total(config, records))}")
    return "\n".join(lines)


def table(config: Any, records: list[UsageRecord], by: str) -> list[str]:
    """``hermes-gateway usage``'s table: one row per user, chat or model, the largest first, and a total."""
    groups: dict[str, list[UsageRecord]] = {}
    for record in records:
        if by == "user":
            key = f"{record.platform}:{record.user_id or '-'}"
        elif by == "chat":
            key = f"{record.platform}:{record.chat_id}" + (f":{record.thread_id}" if record.thread_id else "")
        else:
            key = record.model
        groups.setdefault(key, []).append(record)
    rows = []
    for key, items in groups.items():
        t = total(config, items)
        rows.append((key, t))
    rows.sort(key=lambda row: (-row[1].tokens, row[0]))
    everything = total(config, records)
    header = (by.upper(), "TURNS", "INPUT", "OUTPUT", "COST")

    def cells(name: str, t: Totals) -> tuple[str, ...]:
        mark = "~" if t.estimated else ""
        return (name, str(t.turns), f"{mark}{t.input_tokens:,}", f"{mark}{t.output_tokens:,}",
                money(config, t.cost) if t.cost is not None else "-")
    body = [cells(k, t) for k, t in rows] + [cells("TOTAL", everything)]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    return [line(header), *(line(r) for r in body)]
