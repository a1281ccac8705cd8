"""The plugin keeps every promise of the conformance suite, against a real Synapse.

The client is built and started as the gateway does it (``PlatformRunner``):
whoami, then the sync loop, through :class:`FaultProxy` (which adds the
429s, the refused edit, the late upload and the outage the checks ask for).
The screen is the room as the person's account reads it from Synapse.
"""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
import hermes_matrix
from matrix_test_support import FaultProxy, Person, join, runner


class MatrixHarness(Harness):
    platform = "matrix"
    plugin = hermes_matrix.plugin

    def __init__(self, synapse) -> None:
        self.synapse = synapse

    async def start(self):
        self.bot = self.synapse.register("bot")
        self.person = Person(self.synapse.url, self.synapse.register("person"))
        self.proxy = await FaultProxy(self.synapse.url).start()
        # the late-upload check hangs a call for 4.5 s: past request_timeout, and far past a loaded Synapse's pace
        # a short long-poll: the outage check sees the next sync fail within a second
        self.runner = await runner(self.proxy.url, self.bot, request_timeout=3, sync_timeout=1).__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.proxy.stop()
        await self.person.close()

    async def make_chat(self, purpose):
        room = await self.person.create_room(self.bot.user_id)
        await join(self.synapse.url, self.bot, room)
        return room

    async def screen(self, chat_id):
        return await self.person.screen(chat_id, self.bot.user_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.proxy.inject_rate_limit(chat_id, retry_after)

    async def inject_edit_failure(self, chat_id):
        self.proxy.inject_edit_failure(chat_id)

    async def inject_upload_timeout(self, chat_id, landed):
        self.proxy.hang_file_event(chat_id, 4.5, landed)

    async def attachments(self, chat_id):
        files = [e["content"] for e in await self.person.shown(chat_id, self.bot.user_id)
                 if e["content"].get("msgtype") in ("m.image", "m.file", "m.audio", "m.video")]
        return [(c.get("filename") or c["body"], await self.person.download(c["url"])) for c in files]

    async def break_connection(self):
        self.proxy.down = True

    async def restore_connection(self):
        self.proxy.down = False

    async def person_message(self, chat_id, text):
        return await self.person.send(chat_id, text)

    def reactions(self, chat_id):
        return self.person.reactions_now(chat_id, self.bot.user_id)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_matrix_conforms(check, synapse):
    async with MatrixHarness(synapse) as harness:
        await run_check(check, harness)
