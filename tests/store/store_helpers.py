"""Helpers for the store tests (a uniquely named module, so any subset of the suite imports it)."""

from __future__ import annotations

from typing import Any


class Clock:
    """A clock the test moves by hand, so "last activity" and ordering never depend on the machine's speed."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += seconds


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_turn(question: str, call_id: str, result: str, answer: str) -> list[dict[str, Any]]:
    """One turn in which the model calls a tool, reads its result, then answers."""
    return [
        user(question),
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "clock", "arguments": "{\"tz\": \"UTC\"}"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
        assistant(answer),
    ]
