"""The plugin keeps every promise of the conformance suite, against the signal-cli daemon emulator."""

from __future__ import annotations

import pytest

from hermes_gateway.testing.conformance import CHECKS, Harness, run_check
from hermes_signal import plugin
from hermes_signal.emulator import SignalDaemonEmulator
from signal_test_support import ALICE, runner


class SignalHarness(Harness):
    platform = "signal"
    chat_id = ALICE
    plugin = plugin

    async def make_chat(self, purpose):
        """Each purpose its own person (a chat is the person's number)."""
        number = f"+49151000009{len(self.__dict__.get('_made', ())):02d}"
        self.__dict__.setdefault("_made", []).append(number)
        self.api.person(number)
        return number

    async def start(self):
        self.api = SignalDaemonEmulator(keepalive=1.0)
        await self.api.start()
        self.runner = await runner(self.api, timeout=1).__aenter__()   # the upload timeout check hangs 1.5 s

    async def stop(self):
        await self.runner.__aexit__(None, None, None)
        await self.api.stop()

    async def screen(self, chat_id):
        return self.api.screen(chat_id)

    async def inject_rate_limit(self, chat_id, retry_after):
        self.api.inject_rate_limit(retry_after, chat=chat_id)

    def attachments(self, chat_id):
        return self.api.attachments(chat_id)

    async def inject_upload_timeout(self, chat_id, landed):
        self.api.hang(1.5, landed=landed, chat=chat_id)

    async def inject_edit_failure(self, chat_id):
        self.api.fail_next_edit(chat_id)

    async def break_connection(self):
        await self.api.take_down()

    async def restore_connection(self):
        await self.api.bring_back()

    async def person_message(self, chat_id, text):
        return f"{chat_id}/{self.api.push_message(chat_id, text)}"

    def reactions(self, chat_id):
        return self.api.reactions(chat_id)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_signal_conforms(check):
    async with SignalHarness() as harness:
        await run_check(check, harness)
        assert harness.api.violations == []
