"""The emulator refuses what Mattermost refuses, in Mattermost's shapes (raw HTTP, no plugin in between)."""

from __future__ import annotations

import json

import aiohttp

from hermes_mattermost.emulator import ALICE_ID, ALICE_TOKEN, BOT_TOKEN, MattermostEmulator

CHANNEL = "strict00000000000000000000"


async def call(mm, method, path, token=BOT_TOKEN, **kw):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session:
        async with session.request(method, mm.base_url + "/api/v4" + path, headers=headers, **kw) as response:
            text = await response.text()
            return response.status, response.headers, (json.loads(text) if text.startswith("{") else text)


async def test_auth_unknown_posts_too_long_and_other_users_posts_are_refused(mm):
    mm.channel(CHANNEL, "O")
    status, _, body = await call(mm, "GET", "/users/me", token=None)
    assert (status, body["id"]) == (401, "api.context.session_expired.app_error")
    status, _, body = await call(mm, "GET", "/users/me", token="nottherighttoken0000000000")
    assert status == 401
    status, _, body = await call(mm, "POST", "/posts", json={"channel_id": CHANNEL, "message": "x" * 16384})
    assert (status, body["id"]) == (400, "model.post.is_valid.message_length.app_error")
    status, _, post = await call(mm, "POST", "/posts", json={"channel_id": CHANNEL, "message": "x" * 16383})
    assert status == 201 and post["props"]["from_bot"] == "true"
    status, _, body = await call(mm, "PUT", "/posts/unknownpost000000000000000/patch", json={"message": "y"})
    assert (status, body["id"]) == (403, "api.context.permissions.app_error")
    status, _, body = await call(mm, "PUT", f"/posts/{post['id']}/patch", token=ALICE_TOKEN, json={"message": "y"})
    assert status == 403 and mm.posts[post["id"]].message == "x" * 16383
    status, _, body = await call(mm, "POST", "/posts", json={"channel_id": CHANNEL, "message": "r",
                                                            "root_id": "unknownroot000000000000000"})
    assert (status, body["id"]) == (400, "api.post.create_post.root_id.app_error")
    status, _, body = await call(mm, "POST", "/reactions", json={"user_id": ALICE_ID, "post_id": post["id"],
                                                                "emoji_name": "eyes"})
    assert status == 403
    status, _, body = await call(mm, "POST", "/reactions", json={"user_id": "botuserid00000000000000000",
                                                                "post_id": post["id"], "emoji_name": "👀"})
    assert status == 400
    status, _, body = await call(mm, "GET", "/config/client")
    assert status == 501
    status, _, body = await call(mm, "GET", "/config/client", params={"format": "old"})
    assert body["MaxPostSize"] == "16383"


async def test_the_rate_limit_is_mattermosts_gcra_with_its_headers():
    async with MattermostEmulator(per_sec=1, max_burst=2) as mm:
        answers = [await call(mm, "GET", "/users/me") for _ in range(4)]
        assert [status for status, _, _ in answers] == [200, 200, 200, 429]
        first, limited = answers[0][1], answers[3][1]
        assert (first["X-RateLimit-Limit"], first["X-RateLimit-Remaining"]) == ("3", "2")
        assert first["X-RateLimit-Reset"] == "1" and "Retry-After" not in first
        assert limited["X-RateLimit-Remaining"] == "0" and limited["Retry-After"] == "1"
        assert answers[3][2] == "limit exceeded\n"
        status, _, _ = await call(mm, "GET", "/users/me", token=ALICE_TOKEN)  # per user: Alice has her own
        assert status == 200
        assert len(mm.violations) == 0
        await call(mm, "GET", "/users/me")  # before the wait ended: the emulator notes the violation
        assert len(mm.violations) == 1
