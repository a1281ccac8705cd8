"""Inbound activities: only what the Bot Framework signed for this bot becomes a turn; hostile input never a 5xx.

Each request goes to the real endpoint on the runner's listener, signed (or
not) by the emulator; what counts is the HTTP answer and whether the core
was handed anything (``runner.received``).
"""

from __future__ import annotations

import json
import logging
import time

import jwt
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives.asymmetric import rsa

from hermes_teams.emulator import TeamsEmulator
from teams_test_support import connect, runner

CHAT = "a:hostile"
_OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


#: One emulator and one client for the whole module (started once per worker), on the module's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot():
    async with TeamsEmulator() as api:
        async with runner(api, max_body_bytes=4096) as running:
            connect(api, running.url)
            yield api, running


def forged(api: TeamsEmulator) -> str:
    """Right claims, right key id, signed with a key that is not the Bot Framework's."""
    now = int(time.time())
    return jwt.encode({"iss": "https://api.botframework.com", "aud": api.app_id, "iat": now, "exp": now + 600,
                       "serviceurl": api.service_url}, _OTHER_KEY, algorithm="RS256",
                      headers={"kid": api._kid})


def unsigned(api: TeamsEmulator) -> str:
    now = int(time.time())
    return jwt.encode({"iss": "https://api.botframework.com", "aud": api.app_id, "exp": now + 600,
                       "serviceurl": api.service_url}, None, algorithm="none")


CASES = {
    "no Authorization header": lambda api: None,
    "forged signature": forged,
    "alg none": unsigned,
    "expired": lambda api: api.sign(exp=int(time.time()) - 3600, iat=int(time.time()) - 7200),
    "wrong audience": lambda api: api.sign(aud="11111111-0000-4000-8000-000000000000"),
    "wrong issuer": lambda api: api.sign(iss="https://evil.example"),
    "another serviceUrl": lambda api: api.sign(serviceurl="https://evil.example/"),
    "no serviceurl claim": lambda api: api.sign(serviceurl=None),
    "garbage": lambda api: "not.a.jwt",
    "huge": lambda api: "e" * 8000,
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_request_not_signed_for_this_bot_is_401_and_no_turn(bot, case):
    api, running = bot
    before = len(running.received)
    status, body = await api.post(api.activity(CHAT, f"hello ({case})"), token=CASES[case](api))
    assert status == 401, body
    assert body["error"]["code"] == "Unauthorized"
    assert len(running.received) == before


async def test_a_signed_activity_is_a_turn_with_the_mention_stripped(bot):
    api, running = bot
    await api.send("19:chan@thread.tacv2;messageid=1", "what is up?", kind="channel")
    incoming = running.received[-1]
    assert (incoming.text, incoming.chat_kind, incoming.mentioned) == ("what is up?", "channel", True)
    assert incoming.sender_id == "29:alice" and incoming.bot_name == "Hermes"


async def test_a_flood_of_unknown_key_ids_fetches_the_keys_once(bot):
    api, _ = bot
    fetches = api.key_fetches
    for n in range(5):
        token = jwt.encode({"aud": api.app_id}, _OTHER_KEY, algorithm="RS256", headers={"kid": f"made-up-{n}"})
        assert (await api.post(api.activity(CHAT, "x"), token=token))[0] == 401
    assert api.key_fetches == fetches


@pytest.mark.parametrize("body, status", [
    (b"{not json", 400),
    (b"[1, 2]", 400),
    (json.dumps({"type": "message"}).encode(), 401),          # no serviceUrl: cannot match the token's
    (b"\xff\xfe" * 10, 400),
    (b"{" + b" " * 5000 + b"}", 413),
])
async def test_a_signed_but_malformed_or_oversized_body_is_a_4xx_and_no_turn(bot, body, status):
    api, running = bot
    before = len(running.received)
    answer, _ = await api.post(body)
    assert answer == status
    assert len(running.received) == before


async def test_a_signed_activity_that_is_not_a_valid_message_is_400(bot):
    api, running = bot
    before = len(running.received)
    activity = api.activity(CHAT, "x")
    activity["conversation"] = "not an object"
    assert (await api.post(activity))[0] == 400
    activity = api.activity(CHAT, "x")
    activity["channelId"] = "slack"   # the signing key endorses msteams only
    assert (await api.post(activity))[0] == 401
    assert len(running.received) == before


async def test_other_activity_types_are_acknowledged_and_ignored(bot):
    api, running = bot
    before = len(running.received)
    activity = api.activity(CHAT, "x")
    activity["type"] = "conversationUpdate"
    assert (await api.post(activity))[0] == 200
    assert len(running.received) == before


async def test_a_refused_token_is_one_info_line_without_the_token(bot, caplog):
    api, _ = bot
    caplog.set_level(logging.DEBUG)
    token = forged(api)
    assert (await api.post(api.activity(CHAT, "x"), token=token))[0] == 401
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert token not in caplog.text and token.split(".")[2] not in caplog.text
    assert "teams: refused an activity" in caplog.text
