"""A third-party platform plugin, written the way a plugin author would write one.

It keeps messages in a list (a stand-in for a platform's API) and knows
nothing about pacing, retries or splitting: the core does all of that.
"""

from __future__ import annotations

import hermes_gateway
from hermes_gateway import MessageRef, Platform, RateBudget

PAGES: dict[str, list[str]] = {}


@hermes_gateway.hookimpl
def register_platforms(register):
    register(Platform(name="notebook", max_message_length=64, budgets={"default": RateBudget(rate=2.0, burst=2)}))


@hermes_gateway.hookimpl
def supports_edit(stream):
    return True


@hermes_gateway.hookimpl
async def on_delta(stream, message, text):
    return _write(stream, message, text)


@hermes_gateway.hookimpl
async def on_stream_end(stream, message, text):
    return _write(stream, message, text)


def _write(stream, message, text):
    page = PAGES.setdefault(stream.chat_id, [])
    if message is None:
        page.append(text)
        return MessageRef(stream.chat_id, str(len(page) - 1))
    page[int(message.message_id)] = text
    return message
