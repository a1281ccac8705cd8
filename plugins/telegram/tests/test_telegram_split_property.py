"""Any long reply, in any script, lands in messages Telegram accepts, with every word once and in order."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_gateway import utf16_length
from hermes_telegram.emulator import BotApiEmulator
from telegram_test_support import SETTINGS, TOKEN, delivery_for, fast_runner

ALPHABETS = ["abcdefghij", "語言模型回答你", "😀🎉🌈🚀👍🏽", "Привет", "é́ñ"]
word = st.sampled_from(ALPHABETS).flatmap(lambda a: st.text(alphabet=a, min_size=1, max_size=12))
gap = st.sampled_from([" ", " ", " ", "\n", "\n\n", ", "])
reply_parts = st.lists(st.tuples(word, gap), min_size=300, max_size=1000)


async def deliver(reply: str, pieces: int) -> tuple[list[str], list[str], bool]:
    async with BotApiEmulator(TOKEN) as api:
        tg = fast_runner(api.base_url)
        try:
            session = delivery_for(tg).session("telegram", "1", settings=SETTINGS)
            session.start()
            step = max(1, len(reply) // pieces)
            for start in range(0, len(reply), step):
                session.feed(reply[start:start + step])
                await asyncio.sleep(0)
            report = await session.finish()
        finally:
            await tg.client.close()
        return api.chat(1).screen, api.chat(1).violations, report.delivered


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=reply_parts, pieces=st.integers(min_value=1, max_value=8))
def test_long_replies_in_any_script_fit_and_keep_every_word(parts, pieces):
    reply = "".join(w + g for w, g in parts).strip()
    screen, violations, delivered = asyncio.run(deliver(reply, pieces))
    assert delivered and not violations, violations
    assert all(utf16_length(text) <= 4096 for text in screen)
    assert " ".join(screen).split() == reply.split()
