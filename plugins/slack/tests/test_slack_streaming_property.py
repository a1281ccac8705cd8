"""Any reply, streamed natively with Slack's trouble thrown in at random moments (429s in both shapes,
expired streams, a refused start), ends up in the thread exactly: every word once, in order, no cursor,
no message left streaming, none over 4,000 characters."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_slack.emulator import SlackEmulator
from slack_test_support import CURSOR, SETTINGS, runner

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé語😀", min_size=1, max_size=10)
gap = st.sampled_from([" ", " ", " ", "\n", "\n\n", ". ", ", "])
reply_parts = st.lists(st.tuples(word, gap), min_size=5, max_size=900)
trouble = st.lists(st.tuples(st.integers(min_value=0, max_value=30),
                             st.sampled_from(["429", "ok_false", "expire", "refuse"]),
                             st.sampled_from(["chat.startStream", "chat.appendStream", "chat.stopStream",
                                              "chat.update", "chat.postMessage"])), max_size=4)


async def deliver(reply: str, pieces: int, events: list[tuple[int, str, str]]) -> tuple[list[str], list[str], bool]:
    async with SlackEmulator() as api:
        api.channel("D0PROP", "im")
        async with runner(api) as slack:
            session = slack.delivery().session("slack", "D0PROP", settings=SETTINGS, thread_id="1.0",
                                               chat_kind="im")
            session.start()
            step = max(1, len(reply) // pieces)
            for n, start in enumerate(range(0, len(reply), step)):
                for at, what, method in events:
                    if at != n:
                        continue
                    if what in ("429", "ok_false"):
                        api.inject_rate_limit(0, method=method, shape="http429" if what == "429" else "ok_false")
                    elif what == "expire":
                        api.expire_streams()
                    else:
                        api.start_stream_error = "missing_scope"
                session.feed(reply[start:start + step])
                await asyncio.sleep(0.005)
            report = await session.finish()
        return api.screen("D0PROP"), api.still_streaming() + api.violations, report.delivered


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=reply_parts, pieces=st.integers(min_value=1, max_value=40), events=trouble)
def test_any_reply_lands_exactly_whatever_slack_does(parts, pieces, events):
    reply = "".join(w + g for w, g in parts).strip()
    screen, problems, delivered = asyncio.run(deliver(reply, pieces, events))
    assert delivered and not problems, problems
    assert all(len(text) <= 4000 for text in screen)
    assert not any(text.endswith(CURSOR.strip()) for text in screen)
    assert " ".join(screen).split() == reply.split()
