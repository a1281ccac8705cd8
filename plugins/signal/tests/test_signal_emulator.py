"""The daemon emulator refuses what signal-cli (or the recipients' apps) refuse, in signal-cli's words and codes:
a test that passes against it does not pass by leniency."""

from __future__ import annotations

import aiohttp
import pytest

from hermes_signal.emulator import MAX_EDITS
from signal_test_support import ACCOUNT, ALICE


async def rpc(daemon, method, params=None, *, request_id=1, content_type="application/json", raw=None):
    body = raw if raw is not None else {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if raw is None and request_id is not None:
        body["id"] = request_id
    async with aiohttp.ClientSession() as session:
        data = body if isinstance(body, (bytes, str)) else __import__("json").dumps(body)
        async with session.post(f"{daemon.base_url}/api/v1/rpc", data=data,
                                headers={"Content-Type": content_type}) as response:
            return response.status, (await response.json() if response.status == 200 else None)


@pytest.mark.parametrize("method, params, code", [
    ("sendMessage", {"recipient": [ALICE], "message": "x"}, -32601),             # no such method
    ("send", {"recipient": [ALICE], "message": "x", "editTimestmap": 5}, -32602),  # a typo signal-cli ignores
    ("send", {"message": "x"}, -1),                                               # no recipient
    ("send", {"recipient": [ALICE], "groupId": "Zm9v", "message": "x"}, -1),      # both
    ("send", {"recipient": ["015112345"], "message": "x"}, -1),                   # not a number
    ("send", {"recipient": [ALICE], "message": "x", "editTimestamp": 12345}, -1),  # not our message
    ("send", {"recipient": [ALICE], "attachments": ["/etc/passwd"]}, -1),          # no shared files here
    ("sendReaction", {"recipient": [ALICE], "emoji": "👍"}, -32602),              # no target
    ("sendReaction", {"recipient": [ALICE], "emoji": "👍", "targetAuthor": ALICE, "targetTimestamp": 1}, -1),
])
async def test_what_signal_cli_refuses_is_refused(daemon, method, params, code):
    status, answer = await rpc(daemon, method, params)
    assert status == 200 and answer["error"]["code"] == code and answer["id"] == 1, answer
    assert daemon.screen(ALICE) == []


async def test_the_eleventh_edit_of_a_message_is_refused_and_the_screen_keeps_the_tenth(daemon):
    status, sent = await rpc(daemon, "send", {"recipient": [ALICE], "message": "v0"})
    latest = sent["result"]["timestamp"]
    for n in range(1, MAX_EDITS + 1):
        _, edited = await rpc(daemon, "send", {"recipient": [ALICE], "message": f"v{n}", "editTimestamp": latest})
        latest = edited["result"]["timestamp"]
    _, refused = await rpc(daemon, "send", {"recipient": [ALICE], "message": "v11", "editTimestamp": latest})
    assert refused["error"]["code"] == -1 and daemon.screen(ALICE) == [f"v{MAX_EDITS}"]
    assert daemon.violations == [f"send: edit {MAX_EDITS + 1} of message {sent['result']['timestamp']}"]


async def test_the_wire_rules_of_the_http_endpoint(daemon):
    assert (await rpc(daemon, "version", content_type="text/plain"))[0] == 415
    assert (await rpc(daemon, "version", request_id=None))[0] == 201         # a notification has no answer
    status, answer = await rpc(daemon, "", raw=b"{not json")
    assert answer["error"]["code"] == -32700
    daemon.inject_rate_limit(3, chat=ALICE)
    _, limited = await rpc(daemon, "send", {"recipient": [ALICE], "message": "x"})
    assert limited["error"]["code"] == -5 and limited["error"]["message"] == \
        "Failed to send message due to rate limiting"
    assert limited["error"]["data"]["response"]["results"][0]["retryAfterSeconds"] == 3
    _, sent = await rpc(daemon, "send", {"recipient": [ALICE], "message": "x"})
    assert sent["result"]["results"][0]["type"] == "SUCCESS" and sent["result"]["timestamp"] > 0
    assert sent["result"]["results"][0]["recipientAddress"]["number"] == ALICE
    assert ACCOUNT not in str(sent["result"]["results"])
