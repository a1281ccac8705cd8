"""A stand-in for ``myplatform_sdk``, the SDK the plugin guide's examples are written against.

An in-memory chat service with the calls the guide uses and the failures
it translates. Tests read ``Client.chats`` (what a person would see) and
queue failures in ``Client.failures``.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import AsyncIterator

CLIENTS: list["Client"] = []


class ApiError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class TooManyRequests(ApiError):
    def __init__(self, retry_after: float, is_global: bool = False) -> None:
        super().__init__(429)
        self.retry_after = retry_after
        self.is_global = is_global


class NotModified(ApiError):
    def __init__(self) -> None:
        super().__init__(400)


class Timeout(Exception):
    pass


class TimeoutAfterLanding(Timeout):
    """Queued in ``failures``: the call does its work, then times out (the caller cannot know it landed)."""


@dataclass
class Message:
    id: int
    text: str
    file: bytes | None = None   # an attachment: its bytes, name and kind
    filename: str = ""
    kind: str = ""


@dataclass
class Update:
    id: int
    chat_id: int
    user_id: int
    message_id: int
    text: str
    chat_kind: str = "private"
    mentions_bot: bool = False


@dataclass
class Client:
    token: str
    chats: dict[str, list[Message]] = field(default_factory=dict)
    typing: list[str] = field(default_factory=list)
    failures: list[Exception] = field(default_factory=list)
    closed: bool = False
    inbox: asyncio.Queue = field(default_factory=asyncio.Queue)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        CLIENTS.append(self)

    def screen(self, chat_id: str) -> list[str]:
        return [m.text for m in self.chats.get(str(chat_id), [])]

    def _maybe_fail(self) -> None:
        """Raise the next queued failure (None in the queue: this call succeeds)."""
        failure = self.failures.pop(0) if self.failures else None
        if isinstance(failure, TimeoutAfterLanding):
            self.failures.insert(0, failure)  # the call itself raises it once its work is done
        elif failure is not None:
            raise failure

    async def send_message(self, chat_id: str, text: str) -> Message:
        self._maybe_fail()
        message = Message(next(self._ids), text)
        self.chats.setdefault(str(chat_id), []).append(message)
        return message

    async def edit_message(self, chat_id: str, message_id: str, text: str) -> None:
        self._maybe_fail()
        message = next(m for m in self.chats[str(chat_id)] if m.id == int(message_id))
        if message.text == text:
            raise NotModified()
        message.text = text

    async def send_photo(self, chat_id: str, data: bytes, filename: str, caption: str) -> Message:
        return self._attach(chat_id, data, filename, caption, "photo")

    async def send_file(self, chat_id: str, data: bytes, filename: str, caption: str) -> Message:
        return self._attach(chat_id, data, filename, caption, "file")

    def _attach(self, chat_id: str, data: bytes, filename: str, caption: str, kind: str) -> Message:
        self._maybe_fail()
        message = Message(next(self._ids), caption, file=data, filename=filename, kind=kind)
        self.chats.setdefault(str(chat_id), []).append(message)
        if self.failures and isinstance(self.failures[0], TimeoutAfterLanding):
            raise self.failures.pop(0)
        return message

    async def send_typing(self, chat_id: str) -> None:
        self._maybe_fail()
        self.typing.append(str(chat_id))

    async def start_stream(self, chat_id: str, text: str) -> Message:
        return await self.send_message(chat_id, text)

    async def append_text(self, chat_id: str, message_id: str, more: str) -> None:
        self._maybe_fail()
        next(m for m in self.chats[str(chat_id)] if m.id == int(message_id)).text += more

    async def replace_text(self, chat_id: str, message_id: str, text: str) -> None:
        self._maybe_fail()
        next(m for m in self.chats[str(chat_id)] if m.id == int(message_id)).text = text

    async def stop_stream(self, chat_id: str, message_id: str) -> None:
        self._maybe_fail()

    async def updates(self) -> AsyncIterator[Update]:
        """Each update put in ``inbox``; an exception put there is raised (the platform failing a poll)."""
        while True:
            item = await self.inbox.get()
            if isinstance(item, Exception):
                raise item
            yield item

    async def close(self) -> None:
        self.closed = True
