"""Helpers for the operator tests: a gateway on the reference platform talking to a recording upstream."""

from __future__ import annotations

import itertools
from typing import Any

from hermes_gateway import Incoming, RateBudget
from hermes_gateway.testing import ReferencePlatform, TestGateway

ADMIN = "1000"      # listed in access.admins
PERSON = "2000"     # everyone else

_ids = itertools.count(1)


def reference() -> ReferencePlatform:
    return ReferencePlatform("reference", budgets={"default": RateBudget(rate=200, burst=50)})


def config(upstream_url: str, **sections: Any) -> dict[str, Any]:
    """A config whose default model and a second one (``big``) both point at ``upstream_url``."""
    data: dict[str, Any] = {
        "model": {"base_url": upstream_url, "name": "small-model", "api_key": "sk-test-default",
                  "system_prompt": "You are the default assistant."},
        "models": {"big": {"base_url": upstream_url, "name": "big-model", "api_key": "sk-test-big"}},
        "personas": {"pirate": {"system_prompt": "You are a pirate. Arr.", "description": "talks like a pirate"},
                     "poet": {"system_prompt": "You answer in verse.", "model": "big"}},
        "access": {"admins": [f"reference:{ADMIN}"]},
        "platforms": {"reference": {"enabled": True}},
    }
    data.update(sections)
    return data


def gateway(ref: ReferencePlatform, data: dict[str, Any]) -> TestGateway:
    return TestGateway(data, ref)


async def say(gw: TestGateway, chat: str, text: str, *, user: str = PERSON, chat_kind: str = "private",
              thread: str | None = None) -> Any:
    """One message from ``user`` in ``chat``; returns when its reply is delivered."""
    n = next(_ids)
    return await gw.receive(Incoming("reference", chat, text, sender_id=user, update_id=f"u{n}",
                                     message_id=f"m{n}", chat_kind=chat_kind, thread_id=thread,
                                     mentioned=True))


def last_line(ref: ReferencePlatform, chat: str) -> str:
    return ref.chat(chat).screen[-1]


def system_prompt(body: dict[str, Any]) -> str | None:
    """The system message an upstream request carried (None: none)."""
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" else None
