"""The ``web`` platform keeps the conformance suite's promises (the chat's feed is its screen).

What a browser draws from the feed is the screen: each message id's latest
text, in the order the messages first appeared (a choice's question is its
prompt until ``close_choice`` replaces it); the attachments are the files
the feed links to. Checks that need a 429, a failing edit or reactions do
not apply (a browser has none).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_gateway._core.web import plugin
from hermes_gateway.testing import PlatformRunner
from hermes_gateway.testing.conformance import CHECKS, Harness, run_check


class WebHarness(Harness):
    platform = "web"

    async def start(self):
        self.runner = PlatformRunner(plugin, {"enabled": True})
        await self.runner.__aenter__()

    async def stop(self):
        await self.runner.__aexit__(None, None, None)

    def _events(self, chat_id):
        return [json.loads(e.data) for e in self.runner.client.feed(chat_id).events]

    async def screen(self, chat_id):
        shown: dict[str, str] = {}
        for event in self._events(chat_id):
            if event["type"] in ("text", "choice"):
                shown[event["id"]] = event["text"]
        return list(shown.values())

    def attachments(self, chat_id):
        files = self.runner.client.files
        return [(e["filename"], Path(files[e["url"].rsplit("/", 1)[1]].path).read_bytes())
                for e in self._events(chat_id) if e["type"] == "media"]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
async def test_the_web_platform_conforms(check):
    async with WebHarness() as harness:
        await run_check(check, harness)
