"""The plugin keeps the conformance suite's promises, against a real Dovecot and SMTP server.

Email cannot edit (``supports_edit`` false, docs/plugins.md §7's
"append-only" does not apply either: a mail is sent once, whole), so the
checks about previews and edits do not apply; the rest run as written. A
chat is a real thread: a person mails the bot, the client reads it over
IMAP and the chat id is that thread's. The screen is the person's
mailbox: the text/plain part of each reply in the thread. A 429 is the
SMTP server's ``451 4.7.1`` naming its wait.
"""

from __future__ import annotations

import asyncio

import pytest

import hermes_email
from email_support import person_mail
from hermes_email.inbound import message_ids, thread_chat_id
from hermes_gateway.testing import PlatformRunner
from hermes_gateway.testing.conformance import CHECKS, Harness, run_check


class EmailHarness(Harness):
    platform = "email"
    plugin = hermes_email.plugin

    def __init__(self, mail):
        self.mail = mail
        self.bot, self.person = mail.user("bot"), mail.user("person")

    async def start(self):
        self.runner = PlatformRunner(hermes_email.plugin, self.mail.settings(self.bot))
        await self.runner.__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)

    async def make_chat(self, purpose):
        asked, raw = person_mail(self.person, self.bot, f"hello ({purpose})", subject=f"Conformance {purpose}")
        await self.mail.send(self.bot, raw)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not any(i.message_id == asked for i in self.runner.received):
            assert loop.time() < deadline, "the client did not receive the person's mail"
            await asyncio.sleep(0.05)
        return thread_chat_id(asked)

    async def _thread(self, chat_id):
        return [m for m, _seen in await self.mail.inbox(self.person)
                if thread_chat_id((message_ids(m["References"]) or [""])[0]) == chat_id]

    async def screen(self, chat_id):
        return [m.get_body(("plain",)).get_content().replace("\r\n", "\n").rstrip("\n") for m in await self._thread(chat_id)]

    async def attachments(self, chat_id):
        return [(part.get_filename(), part.get_payload(decode=True))
                for m in await self._thread(chat_id) for part in m.iter_attachments()]

    async def inject_rate_limit(self, chat_id, retry_after):
        self.mail.smtp.refuse_next(451, f"4.7.1 rate limited, try again in {retry_after:g} seconds")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_email_conforms(check, mail):
    async with EmailHarness(mail) as harness:
        await run_check(check, harness)
