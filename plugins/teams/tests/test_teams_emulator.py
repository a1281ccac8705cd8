"""The emulator refuses what Teams refuses: a test passing on it means something."""

from __future__ import annotations

import aiohttp

from hermes_teams.emulator import SCOPE, TeamsEmulator


async def bearer(api, session, secret=None):
    form = {"grant_type": "client_credentials", "client_id": api.app_id,
            "client_secret": secret or api.app_password, "scope": SCOPE}
    async with session.post(api.token_url, data=form) as response:
        return response.status, await response.json()


def stream(text, sequence, stream_id=None, kind="typing", stream_type="streaming"):
    info = {"type": "streaminfo", "streamType": stream_type, "streamSequence": sequence}
    if stream_id:
        info["streamId"] = stream_id
    if kind == "message":
        info.pop("streamSequence")
    return {"type": kind, "text": text, "entities": [info]}


async def test_the_connector_refuses_without_a_token_and_streams_by_the_rules():
    """(A stream update a minute here, so a slow machine cannot space two calls out: each allowed call
    first moves the last call's time back.)"""
    async with TeamsEmulator(stream_interval=60, transit=0.0) as api:
        await streaming_rules(api)


async def streaming_rules(api):
    api.conversation("a:1")
    api.conversation("19:c@thread.tacv2", "channel")
    url = f"{api.base_url}/v3/conversations/a:1/activities"
    async with aiohttp.ClientSession() as session:
        assert (await bearer(api, session, secret="wrong"))[0] == 401
        status, token = await bearer(api, session)
        assert status == 200 and token["token_type"] == "Bearer"
        auth = {"Authorization": f"Bearer {token['access_token']}"}

        async def post(body, to=url):
            async with session.post(to, json=body, headers=auth) as response:
                return response.status, await response.json()

        async with session.post(url, json={"type": "message", "text": "hi"}) as response:
            assert response.status == 401
        assert (await post(stream("a", 1), f"{api.base_url}/v3/conversations/19:c@thread.tacv2/activities"))[0] \
            == 403
        assert (await post(stream("", 1)))[0] == 400
        status, first = await post(stream("The quick", 1))
        assert status == 201
        sid = first["id"]
        api.conversations["a:1"].last_stream_call -= 100
        assert (await post(stream("Hello", 2, sid)))[1]["error"]["code"] == "ContentStreamNotAllowed"
        api.conversations["a:1"].last_stream_call -= 100
        assert (await post(stream("The quick brown", 1, sid)))[0] == 202  # out of order: dropped
        api.conversations["a:1"].last_stream_call -= 100
        assert (await post(stream("The quick brown", 3, sid)))[0] == 202
        status, throttled = await post(stream("The quick brown fox", 4, sid))
        assert status == 429 and throttled["error"]["code"] == "ThrottledRequest"
        api.conversations["a:1"].last_stream_call -= 100
        assert (await post(stream("The quick brown fox.", 0, sid, kind="message", stream_type="final")))[0] == 201
        api.conversations["a:1"].last_stream_call -= 100
        refused = await post(stream("more", 5, sid))
        assert refused[0] == 403 and "already completed" in refused[1]["error"]["message"]
        assert api.screen("a:1") == ["The quick brown fox."]


async def test_past_a_window_a_send_is_a_429_with_retry_after():
    """7 in a window (Teams': 7 a second; a minute here, so a slow machine cannot spread them out)."""
    async with TeamsEmulator(windows=((60.0, 7),), transit=0.0) as api:
        await burst(api)


async def burst(api):
    api.conversation("a:burst")
    url = f"{api.base_url}/v3/conversations/a:burst/activities"
    async with aiohttp.ClientSession() as session:
        _, token = await bearer(api, session)
        auth = {"Authorization": f"Bearer {token['access_token']}"}
        answers = []
        for n in range(8):
            async with session.post(url, json={"type": "message", "text": f"m{n}"}, headers=auth) as response:
                answers.append((response.status, response.headers.get("Retry-After")))
    assert [s for s, _ in answers[:7]] == [201] * 7
    assert answers[7][0] == 429 and 1 <= int(answers[7][1]) <= 60
    assert api.screen("a:burst") == [f"m{n}" for n in range(7)]
