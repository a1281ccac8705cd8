"""``Platform.doctor`` for Slack against the emulator: auth.test for the bot token, apps.connections.open for the
app token in Socket Mode; a wrong one is one line with the fix."""

from __future__ import annotations

from hermes_slack.doctor import doctor
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SlackEmulator
from hermes_slack.plugin import PLATFORM
from hermes_slack.settings import SlackSettings


async def test_both_tokens_work(api):
    lines = await doctor(SlackSettings(bot_token=BOT_TOKEN, app_token=APP_TOKEN, api_base_url=api.base_url))
    assert [ok for ok, _ in lines] == [True, True], lines
    assert lines[0][1].startswith("bot_token accepted (auth.test: @hermes in Hermes Test)")


async def test_a_wrong_bot_token_is_one_line_with_the_fix():
    async with SlackEmulator(bot_token="xoxb-1111111111-2222222222222-SomeOtherWorkspaceToken") as elsewhere:
        lines = await doctor(SlackSettings(bot_token=BOT_TOKEN, app_token=APP_TOKEN, api_base_url=elsewhere.base_url))
    assert lines == [(False, "bot_token: Slack refused it (invalid_auth): copy it again from the app's page "
                             "(OAuth & Permissions > Bot User OAuth Token, xoxb-...)")]


async def test_a_wrong_app_token_in_socket_mode():
    async with SlackEmulator(app_token="xapp-1-A0HERMES-3333333333-SomeOtherAppTokenValue") as elsewhere:
        lines = await doctor(SlackSettings(bot_token=BOT_TOKEN, app_token=APP_TOKEN, api_base_url=elsewhere.base_url))
    assert lines[1] == (False, "app_token: Slack refused it (invalid_auth): copy it again from the app's page "
                               "(Basic Information > App-Level Tokens, xapp-..., with connections:write)")


def test_the_platform_declares_it():
    assert PLATFORM.doctor is doctor
