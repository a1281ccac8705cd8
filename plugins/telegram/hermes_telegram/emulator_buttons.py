"""Inline keyboards in the Bot API emulator: buttons on a message, a person pressing one, the bot's answer.

Telegram's rules that matter here: ``callback_data`` is 1-64 bytes; a
message keeps its keyboard until an edit replaces it (an ``editMessageText``
without ``reply_markup`` removes it); a press is a ``callback_query`` update,
delivered only to a bot whose ``allowed_updates`` include it; the bot
answers it with ``answerCallbackQuery`` (a toast the presser alone sees).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

MAX_CALLBACK_DATA_BYTES = 64


class ButtonError(ValueError):
    """A keyboard Telegram would refuse (the emulator answers 400 with this text)."""


@dataclass
class Buttons:
    """The keyboards on a bot's messages, the presses, and the toasts the bot answered them with."""

    keyboards: dict[tuple[str, str], list[list[dict[str, Any]]]] = field(default_factory=dict)  # (chat, msg) -> rows
    toasts: list[tuple[str, str, str]] = field(default_factory=list)   # (query id, user id, text) answered
    queries: dict[str, tuple[str, str]] = field(default_factory=dict)  # query id -> (chat, user)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def set_markup(self, chat_id: str, message_id: str, markup: Any) -> None:
        """Keep (or, with None, remove) the inline keyboard of one message; refuses what Telegram refuses."""
        if isinstance(markup, str):
            markup = json.loads(markup) if markup else None
        rows = (markup or {}).get("inline_keyboard") if isinstance(markup, dict) else None
        if not rows:
            self.keyboards.pop((chat_id, message_id), None)
            return
        for row in rows:
            for button in row:
                data = button.get("callback_data")
                if not button.get("text") or not isinstance(data, str):
                    raise ButtonError("Bad Request: can't parse inline keyboard button: text and callback_data "
                                      "are required")
                if not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES:
                    raise ButtonError("Bad Request: BUTTON_DATA_INVALID")
        self.keyboards[(chat_id, message_id)] = rows

    def labels(self, chat_id: str, message_id: str) -> list[str]:
        """The buttons a person sees under one message (none once it was edited without them)."""
        return [b["text"] for row in self.keyboards.get((chat_id, message_id), []) for b in row]

    def data_of(self, chat_id: str, message_id: str, label: str) -> str:
        for row in self.keyboards.get((chat_id, message_id), []):
            for button in row:
                if button["text"] == label:
                    return button["callback_data"]
        raise LookupError(f"no button {label!r} under message {message_id} in chat {chat_id} "
                          f"(it shows {self.labels(chat_id, message_id)})")

    def new_query(self, chat_id: str, user_id: str) -> str:
        query_id = str(next(self._ids))
        self.queries[query_id] = (chat_id, user_id)
        return query_id

    def answer(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id") or "")
        if query_id not in self.queries:
            raise ButtonError("Bad Request: query is too old and response timeout expired or query ID is invalid")
        _, user = self.queries.pop(query_id)  # a query is answered once
        self.toasts.append((query_id, user, str(params.get("text") or "")))
        return True


def kind_of(update: dict[str, Any]) -> str:
    """An update's type: the one key besides ``update_id``."""
    return next((k for k in update if k != "update_id"), "")
