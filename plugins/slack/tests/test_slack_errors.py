"""slack_sdk failures as the core sees them: RateLimited with its wait, or a DeliveryError saying what to do."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from hermes_gateway import DeliveryError, RateLimited
from hermes_slack.errors import DEFAULT_RETRY_AFTER, translate


def api_error(error, status=200, headers=None):
    response = AsyncSlackResponse(client=None, http_verb="POST", api_url="http://x/api/chat.update", req_args={},
                                  data={"ok": False, "error": error}, headers=headers or {}, status_code=status)
    return SlackApiError("The request to the Slack API failed.", response)


def test_both_rate_limit_shapes_become_rate_limited():
    limited = translate(api_error("ratelimited", 429, {"Retry-After": "12"}), "chat.update")
    assert isinstance(limited, RateLimited) and limited.retry_after == 12
    limited = translate(api_error("ratelimited", 429, {"retry-after": "3"}), "chat.postMessage")
    assert isinstance(limited, RateLimited) and limited.retry_after == 3
    ok_false = translate(api_error("rate_limited"), "chat.appendStream")
    assert isinstance(ok_false, RateLimited) and ok_false.retry_after == DEFAULT_RETRY_AFTER


@pytest.mark.parametrize("error, retryable, words", [
    ("not_in_channel", False, "invite it"),
    ("channel_not_found", False, "invite it"),
    ("invalid_auth", False, "platforms.slack.bot_token"),
    ("msg_too_long", False, "over Slack's limit"),
    ("message_not_found", False, "message_not_found"),
    ("internal_error", True, "internal_error"),
])
def test_slack_errors_say_what_happened(error, retryable, words):
    translated = translate(api_error(error), "chat.update")
    assert type(translated) is DeliveryError and translated.retryable is retryable
    assert words in str(translated) and str(translated).startswith("slack chat.update: ")


def test_server_errors_and_the_network():
    assert translate(api_error("fatal_error", 503), "chat.update").retryable
    timeout = translate(asyncio.TimeoutError(), "chat.update")
    assert timeout.retryable and timeout.maybe_delivered, "the edit may have landed"
    broken = translate(aiohttp.ServerDisconnectedError(), "chat.update")
    assert broken.retryable and broken.maybe_delivered


def test_a_token_in_an_error_text_is_masked():
    """Any Slack-shaped token, not only the configured ones (the core masks those by their value)."""
    translated = translate(RuntimeError("failed with xoxb-1234567890-abcdefghijkl in the url"), "chat.update")
    assert "xoxb-1234567890" not in str(translated) and "failed with <secret> in the url" in str(translated)
