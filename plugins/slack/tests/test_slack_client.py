"""The client's lifecycle: built per gateway from its own settings, no I/O until started, nothing shared."""

from __future__ import annotations

from hermes_slack.emulator import SlackEmulator
from slack_test_support import CURSOR, eventually, gateway, runner

OTHER_BOT_TOKEN = "xoxb-4444444444-5555555555555-SecondWorkspaceBotToken"
OTHER_APP_TOKEN = "xapp-1-A0SECOND-6666666666-SecondWorkspaceAppToken"
REPLY = " ".join(["Each workspace gets this reply word by word from its own gateway."] * 3)


def settled(api, channel, thread):
    screen = api.screen(channel, thread)
    return bool(screen) and not api.still_streaming() and not any(CURSOR.strip() in t for t in screen)


async def test_building_the_client_calls_nothing_and_mounts_no_route_in_socket_mode(api):
    async with runner(api) as slack:
        assert slack.client is not None and slack.url is None, "socket mode serves no route"
    assert api.calls == [], "no Web API call before start()"


async def test_in_http_mode_the_built_client_serves_the_events_route_but_refuses_events_until_started(api):
    async with runner(api, mode="http") as slack:
        api.events_url = slack.url + "/webhooks/slack/events"
        status, _ = await api.url_verification("not-yet")
    assert status == 404, "not receiving: bolt is not running before start()"
    assert api.calls == []


async def test_two_gateways_in_one_process_run_two_clients_that_share_nothing():
    """Two workspaces, one gateway each: each client learns its own bot and remembers its own refusals."""
    async with SlackEmulator(team_id="T0ONE", bot_user_id="U0ONE") as one, \
            SlackEmulator(OTHER_BOT_TOKEN, OTHER_APP_TOKEN, team_id="T0TWO", bot_user_id="U0TWO") as two:
        one.start_stream_error = "missing_scope"     # workspace one has no native streaming
        async with gateway(one, tokens_per_second=100) as first, \
                gateway(two, tokens_per_second=100, bot_token=OTHER_BOT_TOKEN, app_token=OTHER_APP_TOKEN) as second:
            a, b = first.client("slack"), second.client("slack")
            assert a is not None and b is not None and a is not b
            await one.wait_connected()
            await two.wait_connected()
            asked_one = await one.push_message("D0ONE", f"echo: {REPLY}", kind="im")
            asked_two = await two.push_message("D0TWO", f"echo: {REPLY}", kind="im")
            await eventually(lambda: settled(one, "D0ONE", asked_one) and settled(two, "D0TWO", asked_two),
                             lambda: (one.screen("D0ONE"), two.screen("D0TWO")))
            assert (a.events.team_id, a.events.bot_user_id) == ("T0ONE", "U0ONE")
            assert (b.events.team_id, b.events.bot_user_id) == ("T0TWO", "U0TWO")
            assert a.outbound.native_refused and not b.outbound.native_refused
        assert a.bolt is None and b.bolt is None, "each stopped receiving with its own gateway"
    assert one.screen("D0ONE") == [REPLY] and two.screen("D0TWO") == [REPLY]
    assert len(one.calls_to("chat.postMessage")) == 1 and one.calls_to("chat.update"), \
        "workspace one: posted and edited"
    assert two.calls_to("chat.postMessage") == [] and len(two.calls_to("chat.startStream")) == 1, \
        "workspace two still streams natively: the other client's refusal is not its own"
    assert not one.violations and not two.violations
