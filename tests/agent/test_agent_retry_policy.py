"""The fast transport's retry policy: what is retried and how long it waits, stated here and checked against the SDK.

The first tests state the policy on their own. The last ones hold it
against the installed ``openai`` SDK's private methods, which it copies: if
an SDK upgrade changes them, those tests fail (and say so) rather than the
two transports quietly drifting apart.
"""

from __future__ import annotations

import email.utils
import random
import time

import openai
import pytest
from hypothesis import given, settings, strategies as st

from hermes_gateway._core.agent.retry_policy import (INITIAL_DELAY, MAX_DELAY, MAX_RETRY_AFTER, retry_after,
                                                     retry_delay, should_retry)
from hermes_gateway._core.demo.transport import httpx


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 599])
def test_timeouts_conflicts_rate_limits_and_5xx_are_retried(status: int) -> None:
    assert should_retry(status, {})


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 413, 415, 422, 499])
def test_other_client_errors_are_not(status: int) -> None:
    assert not should_retry(status, {})


def test_the_server_may_say_otherwise_and_a_long_retry_after_is_not_waited_for() -> None:
    assert should_retry(400, {"x-should-retry": "true"})
    assert not should_retry(503, {"x-should-retry": "false"})
    assert should_retry(429, {"retry-after": "120"})
    assert not should_retry(429, {"retry-after": "121"})
    assert not should_retry(429, {"retry-after-ms": "121000"})
    assert not should_retry(503, {"retry-after": "1e999"})  # too big for a float: excessive, not "no header"


def test_retry_after_reads_milliseconds_first_then_seconds_then_a_date() -> None:
    assert retry_after(None) is None and retry_after({}) is None
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "1.5"}) == 1.5
    assert retry_after({"retry-after-ms": "soon", "retry-after": "2"}) == 2.0
    assert retry_after({"retry-after": "inf"}) == float("inf")
    assert retry_after({"retry-after": "1e999"}) == MAX_RETRY_AFTER + 1
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 <= retry_after({"retry-after": in_ten}) <= 10  # type: ignore[operator]
    assert retry_after({"retry-after": "tomorrow-ish"}) is None


def test_the_wait_is_the_servers_when_reasonable_else_a_jittered_exponential_backoff() -> None:
    assert retry_delay(2, 2, {"retry-after-ms": "5"}) == 0.005
    assert retry_delay(2, 2, {"retry-after": "120"}) == 120
    for headers in (None, {}, {"retry-after": "0"}, {"retry-after": "-3"}, {"retry-after": "121"},
                    {"retry-after": "nan"}):
        for taken, backoff in enumerate([INITIAL_DELAY, 1.0, 2.0, 4.0, MAX_DELAY, MAX_DELAY]):
            wait = retry_delay(10 - taken, 10, headers, random.Random(taken))
            assert 0.75 * backoff <= wait <= backoff, (headers, taken, wait)
    assert retry_delay(0, 10_000, None) <= MAX_DELAY  # a huge budget does not overflow


# -- the same as the SDK's (its private methods are the oracle; a change there fails here) ----------------

SDK = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", max_retries=5)
HAS_ORACLE = all(hasattr(SDK, name) for name in ("_should_retry", "_calculate_retry_timeout"))
needs_oracle = pytest.mark.skipif(not HAS_ORACLE, reason="this openai SDK no longer has the methods the policy copies")

HEADER_VALUES = st.one_of(st.none(), st.sampled_from(["0", "1", "0.5", "-1", "120", "121", "1e999", "inf", "nan",
                                                      "soon", "", "30000", "Wed, 21 Oct 2015 07:28:00 GMT"]))


def headers_of(ms: str | None, seconds: str | None, should: str | None) -> dict[str, str]:
    found = {"retry-after-ms": ms, "retry-after": seconds, "x-should-retry": should}
    return {name: value for name, value in found.items() if value is not None}


class _Options:
    @staticmethod
    def get_max_retries(default: int) -> int:
        return default


@needs_oracle
@settings(max_examples=300, deadline=None)
@given(status=st.sampled_from([200, 400, 401, 404, 408, 409, 422, 429, 500, 503, 599]), ms=HEADER_VALUES,
       seconds=HEADER_VALUES, should=st.sampled_from([None, "true", "false", "maybe"]))
def test_should_retry_is_the_sdks(status: int, ms: str | None, seconds: str | None, should: str | None) -> None:
    headers = headers_of(ms, seconds, should)
    response = httpx.Response(status, headers=headers, request=httpx.Request("POST", "http://127.0.0.1:9/v1/x"))
    assert should_retry(status, headers) is SDK._should_retry(response)


@needs_oracle
@settings(max_examples=300, deadline=None)
@given(remaining=st.integers(0, 5), ms=HEADER_VALUES, seconds=HEADER_VALUES, seed=st.integers(0, 2**32 - 1))
def test_the_wait_is_the_sdks(remaining: int, ms: str | None, seconds: str | None, seed: int) -> None:
    headers = headers_of(ms, seconds, None)
    random.seed(seed)  # both draw their jitter from the random module's shared generator
    ours = retry_delay(remaining, 5, headers)
    random.seed(seed)
    theirs = SDK._calculate_retry_timeout(remaining, _Options(), httpx.Headers(headers))
    assert ours == pytest.approx(theirs, abs=0.01)  # a date is measured against the clock twice
