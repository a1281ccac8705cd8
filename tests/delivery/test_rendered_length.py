"""``Platform.rendered_length``: a message holds up to the limit of what the platform counts after rendering.

The reference platform is given a tiny renderer of its own (it drops ``**``)
and enforces its limit on the rendered text, as Telegram counts the text
after the entities are taken out, not the Markdown.
"""

from __future__ import annotations

from delivery_helpers import feed_over, make_delivery, streaming, words

from hermes_gateway import Platform, RateBudget
from hermes_gateway._core.delivery.measure import RenderedMeasure, measure_for, measure_for_platform
from hermes_gateway._core.delivery.split import render, split_text
from hermes_gateway.testing import ReferencePlatform, run_virtual


def without_bold(text: str) -> int:
    """This test's platform renders ``**x**`` as bold x: only the x counts."""
    return len(text.replace("**", ""))


def test_a_text_well_within_the_limit_is_measured_without_rendering_it():
    rendered = []

    def counting(text):
        rendered.append(text)
        return without_bold(text)

    measure = RenderedMeasure(measure_for("chars"), counting, limit=1000)
    assert measure("**short**") == 9 and rendered == [], "far from the limit: the plain length, no rendering"
    long = "**bold** " * 100
    assert measure(long) == without_bold(long) and measure(long) == without_bold(long)
    assert rendered == [long], "near the limit it is rendered, once per text"


def test_the_core_uses_the_rendered_length_only_when_the_platform_declares_one():
    plain = Platform("plain", max_message_length=100)
    assert measure_for_platform(plain) is len
    rendering = Platform("rendering", max_message_length=100, rendered_length=without_bold)
    assert isinstance(measure_for_platform(rendering), RenderedMeasure)


def test_a_reply_longer_than_the_limit_in_markdown_but_not_once_rendered_stays_one_message():
    doc = " ".join(f"**w{i}**" for i in range(60))                       # 359 characters, 239 rendered
    limit = 300
    measure = RenderedMeasure(measure_for("chars"), without_bold, limit)
    assert len(split_text(doc, limit, measure_for("chars"))) == 2
    assert [render(doc, p) for p in split_text(doc, limit, measure)] == [doc]


def test_a_long_reply_fills_each_message_up_to_the_rendered_limit():
    doc = " ".join(f"**w{i}**" for i in range(400))
    limit = 500
    measure = RenderedMeasure(measure_for("chars"), without_bold, limit)
    unit_pieces = split_text(doc, limit, measure_for("chars"))
    pieces = [render(doc, p) for p in split_text(doc, limit, measure)]
    assert len(pieces) < len(unit_pieces)
    assert all(without_bold(p) <= limit for p in pieces)
    assert all(without_bold(p) > limit - 80 for p in pieces[:-1]), "every message but the last is nearly full"
    assert "".join(pieces) == doc


def test_a_streamed_reply_is_cut_by_what_the_platform_counts_and_never_refused():
    reply = " ".join(f"**bold{i}** plain{i}" for i in range(120))       # ~2,500 characters, ~2,000 rendered
    by_markdown = len(split_text(reply, 700, measure_for("chars")))
    ref = ReferencePlatform(max_message_length=700, budgets={"default": RateBudget(rate=50.0, burst=10)},
                            rendered_length=without_bold)

    async def main():
        session = make_delivery(ref).session("reference", "c", settings=streaming(edit_interval=0.5))
        await feed_over(session, words(reply), 10)
        return await session.finish()

    report = run_virtual(main())
    chat = ref.chat("c")
    assert report.delivered and not chat.violations, chat.violations
    assert len(chat.screen) == 3 < by_markdown == 4, [without_bold(t) for t in chat.screen]
    assert " ".join(chat.screen).split() == reply.split()
