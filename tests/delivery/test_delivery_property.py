"""Random chunkings, fault schedules and cancellations: the screen is always right."""

from __future__ import annotations

import asyncio

from delivery_helpers import make_delivery, streaming
from hypothesis import HealthCheck, given, settings, strategies as st

from hermes_gateway import RateBudget
from hermes_gateway._core.delivery import DeliveryPolicy
from hermes_gateway._core.delivery.measure import measure_for
from hermes_gateway._core.reasoning import postprocess_reply
from hermes_gateway.testing import Fault, ReferencePlatform, reassemble, run_virtual

CURSOR = " ▌"
SECRET = "SECRET"

paragraph = st.text(alphabet=st.sampled_from(list("abcde fgh.,!?\n😀é")), min_size=1, max_size=160)
# code lines shorter than a message: only a longer line forces a mid-line cut (see split.reassemble)
code_block = st.builds(lambda lines: "```py\n" + "\n".join(lines) + "\n```",
                       st.lists(st.text(alphabet="xyz =()", max_size=20), max_size=8))
think_block = st.just(f"<think>{SECRET} reasoning</think>")
reply_parts = st.lists(st.one_of(paragraph, paragraph, code_block, think_block), min_size=1, max_size=8)

fault = st.one_of(
    st.builds(Fault.rate_limited, st.floats(min_value=0.05, max_value=20)),
    st.builds(Fault.error, st.just(True)),
    st.builds(Fault.timeout, st.just(False), st.sampled_from(["edit", "typing"])),
    st.builds(Fault.timeout, st.just(True), st.sampled_from(["edit", "send"])),  # "send": see below
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=reply_parts,
    cuts=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=50),
    gaps=st.lists(st.floats(min_value=0.0, max_value=2.0), min_size=1, max_size=20),
    schedule=st.dictionaries(st.integers(min_value=0, max_value=40), fault, max_size=8),
    cancel_at=st.one_of(st.none(), st.integers(min_value=0, max_value=60)),
    limit=st.integers(min_value=60, max_value=400),
    unit=st.sampled_from(["chars", "utf16"]),
    rate=st.sampled_from([RateBudget(1.0, 1), RateBudget(20 / 60, 3), RateBudget(5.0, 2)]),
    edits=st.booleans(),
    min_tokens=st.integers(min_value=0, max_value=30),
)
def test_the_final_screen_is_exactly_the_reply(parts, cuts, gaps, schedule, cancel_at, limit, unit, rate, edits,
                                               min_tokens):
    raw = "\n\n".join(parts)
    chunks, i = [], 0
    while i < len(raw):
        size = cuts[len(chunks) % len(cuts)]
        chunks.append(raw[i:i + size])
        i += size
    ref = ReferencePlatform(max_message_length=limit, length_unit=unit, budgets={"default": rate},
                            supports_edit=edits)
    if edits:  # a preview's send that lands unanswered leaves a message nobody can edit (its cursor stays)
        schedule = {at: f for at, f in schedule.items() if not (f.kind == "timeout" and f.on == "send")}
    ref.chat("c").schedule.update(schedule)
    policy = DeliveryPolicy(backoff_base=0.05, backoff_cap=1.0)
    cancelled = cancel_at is not None and cancel_at < len(chunks)

    async def main():
        session = make_delivery(ref, policy).session(
            "reference", "c", settings=streaming(edit_interval=1.0, min_tokens=min_tokens))
        for n, chunk in enumerate(chunks):
            if cancelled and n == cancel_at:
                return await session.interrupt()
            session.feed(chunk)
            await asyncio.sleep(gaps[n % len(gaps)])
        return await session.finish()

    report = run_virtual(main())
    chat = ref.chat("c")
    measure = measure_for(unit)
    reply = postprocess_reply(raw).strip()

    assert chat.violations == []  # no call while rate-limited, nothing over the limit, no empty text
    for message in chat.messages:
        assert all(SECRET not in text for text in message.history)
        assert all(measure(text) <= limit for text in message.history)
    screen = chat.screen
    assert not any(text.endswith(CURSOR) for text in screen)
    if cancelled:
        assert report.interrupted
        shown = reassemble(screen)
        if shown.endswith("```"):  # a fence left open by the cut-off text is closed on screen
            shown = shown[:-3]
        assert reply.startswith(shown.rstrip())
    else:
        assert report.delivered, report.error
        if reply:
            assert reassemble(screen) == reply
        assert all(t.count("```") % 2 == 0 for t in screen)
