"""A third-party platform plugin in its smallest form, written the way a plugin author would write one.

It keeps messages in pages (a stand-in for a platform's API) and knows
nothing about pacing, retries or splitting: the core does all of that.
The gateway builds one :class:`NotebookClient` per run, so two gateways
in one process keep two notebooks.
"""

from __future__ import annotations

from dataclasses import dataclass

import hermes_gateway
from hermes_gateway import MessageRef, Platform, PlatformClient, RateBudget, Stream


@dataclass(frozen=True)
class NotebookSettings:
    """``platforms.notebook``: the title written on the notebook's cover."""

    title: str = "notes"


class NotebookClient(PlatformClient):
    """One notebook: chat id -> its page of messages."""

    def __init__(self, settings: NotebookSettings, context: hermes_gateway.PlatformContext) -> None:
        super().__init__(settings, context)
        self.pages: dict[str, list[str]] = {}

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return self._write(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return self._write(stream, message, text)

    def _write(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        page = self.pages.setdefault(stream.chat_id, [])
        if message is None:
            page.append(text)
            return MessageRef(stream.chat_id, str(len(page) - 1))
        page[int(message.message_id)] = text
        return message


PLATFORM = Platform(name="notebook", max_message_length=64, budgets={"default": RateBudget(rate=2.0, burst=2)},
                    settings=NotebookSettings, client=NotebookClient)


@hermes_gateway.hookimpl
def register_platforms(register):
    register(PLATFORM)
