"""Any long reply, in any script, reaches the phone in messages WhatsApp accepts, every word once and in order."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_gateway import StreamSettings
from hermes_whatsapp.emulator import GraphApiEmulator
from whatsapp_test_support import APP_SECRET, FAST, PHONE_ID, TOKEN, USER, runner_for

ALPHABETS = ["abcdefghij", "語言模型回答你", "😀🎉🌈🚀👍🏽", "Привет", "é́ñ", "```"]
word = st.sampled_from(ALPHABETS).flatmap(lambda a: st.text(alphabet=a, min_size=1, max_size=12))
gap = st.sampled_from([" ", " ", " ", "\n", "\n\n", ", ", "\n```\n"])
reply_parts = st.lists(st.tuples(word, gap), min_size=300, max_size=1500)


async def deliver(reply: str, streaming: bool) -> tuple[list[str], list[str], bool, list[str]]:
    async with GraphApiEmulator(TOKEN, PHONE_ID, APP_SECRET) as meta:
        runner = runner_for(meta, limits={"budgets": FAST})
        runner.build()
        try:
            session = runner.delivery().session("whatsapp", USER, settings=StreamSettings(
                enabled=streaming, edit_interval=0.01, min_tokens=1))
            session.start()
            for start in range(0, len(reply), 97):
                session.feed(reply[start:start + 97])
                await asyncio.sleep(0)
            report = await session.finish()
        finally:
            await runner.client.close()
        return meta.screen(USER), meta.user(USER).violations, report.delivered, \
            [c.outcome for c in meta.user(USER).calls]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=reply_parts, streaming=st.booleans())
def test_long_replies_in_any_script_fit_and_keep_every_word(parts, streaming):
    reply = "".join(w + g for w, g in parts).strip()
    screen, violations, delivered, outcomes = asyncio.run(deliver(reply, streaming))
    assert delivered and not violations, violations
    assert all(len(text) <= 4096 for text in screen)
    assert outcomes == ["sent"] * len(screen), "one send per message, whatever streaming says"
    shown = " ".join(screen).split()
    # a cut inside a code block closes it in one message and reopens it in the next: those fences are added
    assert [w for w in shown if "```" not in w] == [w for w in reply.split() if "```" not in w]
