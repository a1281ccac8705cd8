"""The reply renderer, fed event sequences as the agent produces them, drawn on a pyte screen.

These check what the renderer does with each kind of event (including the
rare ones a demo model does not produce, like a StreamReset); the chat as a
whole is tested with the real agent in test_chat_*.py.
"""

import asyncio
import io
import time

import pyte
import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.output.vt100 import Vt100_Output

from hermes_gateway._core.cli.render import RenderOptions, ReplyRenderer
from hermes_gateway._core.cli.sinks import PlainSink, TerminalSink
from hermes_gateway._core.events import StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd

COLS, ROWS = 60, 30


class CountingStream(io.StringIO):
    """The terminal's end of the output: counts writes so batching can be seen."""

    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, s):
        self.writes += 1
        return super().write(s)


class Term:
    def __init__(self):
        self.stream = CountingStream()
        self.output = Vt100_Output(self.stream, lambda: Size(rows=ROWS, columns=COLS), term="xterm")
        self.sink = TerminalSink(self.output)

    def lines(self):
        screen = pyte.Screen(COLS, ROWS)
        stream = pyte.Stream(screen)
        stream.feed(self.stream.getvalue())
        return [line.rstrip() for line in screen.display if line.strip()]

    def text(self):
        return "\n".join(self.lines())

    def rows(self):
        """Every row down to the last non-blank one, blank rows included."""
        screen = pyte.Screen(COLS, ROWS)
        pyte.Stream(screen).feed(self.stream.getvalue())
        rows = [line.rstrip() for line in screen.display]
        while rows and not rows[-1]:
            rows.pop()
        return rows


def renderer(term, **options):
    return ReplyRenderer(term.sink, term.sink, RenderOptions(**options))


async def events(*items, pause=0.0, seen=None, term=None):
    for item in items:
        if pause:
            await asyncio.sleep(pause)
        yield item
        if seen is not None:
            seen.append(term.text())


async def test_text_appears_inside_a_box_without_think_blocks():
    term = Term()
    final = await renderer(term, label="demo").render(events(
        TextDelta("<think>plan the "), TextDelta("answer</thi"), TextDelta("nk>\n\nHello "),
        TextDelta("world."), TurnEnd(reply="Hello world.")))
    assert final.reply == "Hello world."
    lines = term.lines()
    assert lines[0].startswith("╭─ demo ─") and lines[0].endswith("╮")
    assert lines[1] == "Hello world."
    assert lines[2].startswith("╰─") and lines[2].endswith("╯")
    assert len(lines) == 3
    assert "plan" not in term.text()


async def test_deltas_are_written_in_batches_not_one_write_per_token():
    term = Term()
    words = [f"w{i} " for i in range(150)]
    started = time.monotonic()
    await renderer(term, spinner=False).render(events(
        *[TextDelta(w) for w in words], TurnEnd(reply="".join(words).strip()), pause=0.002))
    elapsed = time.monotonic() - started
    # At most one reply write per 50 ms window (plus the box borders and the end).
    assert term.stream.writes <= elapsed / 0.05 + 8
    assert term.stream.writes < len(words) / 3
    assert "w149" in term.text()


async def test_the_first_text_is_shown_at_once_and_the_spinner_goes_away():
    term = Term()
    seen = []
    await renderer(term).render(events(
        TextDelta("First "), TextDelta("second"), TurnEnd(reply="First second"), seen=seen, term=term))
    assert "First" in seen[0]              # shown before the next delta was even asked for
    assert "thinking" not in term.text()   # the spinner line was erased


async def test_a_tool_line_appears_the_moment_the_call_starts():
    term = Term()
    seen = []
    await renderer(term).render(events(
        ToolCallStarted(call_id="c1", name="web_search"),
        ToolCallFinished(call_id="c1", name="web_search", arguments="{}", summary="3 results"),
        TextDelta("Found it."), TurnEnd(reply="Found it."), seen=seen, term=term))
    assert "🔧 calling web_search" in seen[0]
    lines = term.lines()
    tool_row = next(i for i, line in enumerate(lines) if "calling web_search" in line)
    box_row = next(i for i, line in enumerate(lines) if line.startswith("╭"))
    assert tool_row < box_row
    assert any("✓ web_search: 3 results" in line for line in lines)


async def test_a_stream_reset_is_shown_as_a_seam_and_the_replacement_follows():
    term = Term()
    await renderer(term).render(events(
        TextDelta("Partial ans"), StreamReset(reason="upstream stream broke"),
        TurnEnd(reply="The complete answer.")))
    text = term.text()
    assert "Partial ans" in text
    assert "upstream stream broke" in text
    assert text.index("upstream stream broke") < text.index("The complete answer.")
    assert text.count("The complete answer.") == 1
    assert term.lines()[-1].startswith("╰")


async def test_a_tail_missing_from_the_stream_is_printed_from_the_final_reply():
    term = Term()
    await renderer(term).render(events(TextDelta("Hello"), TurnEnd(reply="Hello world")))
    assert term.lines()[1] == "Hello world"


async def test_with_streaming_off_nothing_of_the_reply_shows_until_the_end_then_it_shows_once():
    term = Term()
    seen = []
    await renderer(term, streaming=False).render(events(
        TextDelta("one "), TextDelta("two "), TextDelta("three"), TurnEnd(reply="one two three"),
        seen=seen, term=term))
    assert all("one" not in screen for screen in seen[:3])
    assert term.text().count("one two three") == 1
    assert term.lines()[-1].startswith("╰")


async def test_cancelling_keeps_what_was_shown_closes_the_box_and_closes_the_stream():
    term = Term()
    closed = asyncio.Event()

    async def endless():
        try:
            yield TextDelta("Some words")
            while True:
                await asyncio.sleep(0.01)
                yield TextDelta(" more")
        finally:
            closed.set()

    task = asyncio.ensure_future(renderer(term).render(endless()))
    while "Some words" not in term.text():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set()
    lines = term.lines()
    assert lines[1].startswith("Some words")
    assert "interrupted" in lines[-2]
    assert lines[-1].startswith("╰")


async def test_an_interrupted_turn_end_closes_the_box_with_a_note():
    term = Term()
    await renderer(term).render(events(TextDelta("Half a"), TurnEnd(reply="Half a", interrupted=True)))
    lines = term.lines()
    assert lines[1] == "Half a"
    assert "⏹ interrupted" in lines[2]
    assert lines[3].startswith("╰")


async def test_model_text_cannot_send_escape_sequences_to_the_terminal():
    term = Term()
    await renderer(term).render(events(TextDelta("red \x1b[31mtext\x07 \x1b[2J"), TurnEnd(reply="x")))
    raw = term.stream.getvalue()
    assert "\x1b[31m" not in raw and "\x1b[2J" not in raw and "\x07" not in raw


async def test_plain_output_is_exactly_the_reply_and_a_newline():
    out = io.StringIO()
    plain = ReplyRenderer(PlainSink(out), None, RenderOptions(boxed=False, spinner=False))
    await plain.render(events(TextDelta("<think>x</think>"), TextDelta("Exact "), TextDelta("text\x1b"),
                              ToolCallStarted(call_id="c", name="t"), TurnEnd(reply="Exact text\x1b")))
    assert out.getvalue() == "Exact text\x1b\n"


async def test_text_after_a_tool_line_continues_without_a_gap():
    term = Term()
    await renderer(term).render(events(
        TextDelta("Let me check."), ToolCallStarted(call_id="c", name="calculate"),
        ToolCallFinished(call_id="c", name="calculate", arguments="{}", summary="42"),
        TextDelta("\n\n"), TextDelta("It is 42."), TurnEnd(reply="Let me check.\n\nIt is 42.")))
    rows = term.rows()
    assert rows[1:5] == ["Let me check.", "🔧 calling calculate", "   ✓ calculate: 42", "It is 42."]
    assert rows[5].startswith("╰") and len(rows) == 6
    assert "differs" not in term.text()


async def test_a_long_tool_result_stays_on_one_row():
    term = Term()
    await renderer(term).render(events(
        ToolCallStarted(call_id="c", name="search"),
        ToolCallFinished(call_id="c", name="search", arguments="{}", summary="🔎 " * 40 + "\nsecond line"),
        TextDelta("Done."), TurnEnd(reply="Done.")))
    rows = term.rows()
    assert rows[0] == "🔧 calling search"
    assert rows[1].startswith("   ✓ search: 🔎") and rows[1].endswith("…")
    assert rows[2].startswith("╭")


async def test_media_is_listed_after_the_box_a_refused_item_as_its_line():
    from hermes_gateway import Media

    term = Term()
    media = (Media(path="/m/qr.png", caption="Scan"), Media(url="https://example.com/a.pdf"),
             Media(filename="key.pem", refused="outside the media directory"))
    await renderer(term, label="demo").render(events(TextDelta("Here."), TurnEnd(reply="Here.", media=media)))
    assert term.lines()[1:] == ["Here.", term.lines()[2], "📎 image: /m/qr.png — Scan",
                                "📎 document: https://example.com/a.pdf",
                                "📎 key.pem (outside the media directory)"]
    assert term.lines()[2].startswith("╰─")


async def test_an_interrupted_turn_lists_no_media():
    from hermes_gateway import Media

    term = Term()
    await renderer(term).render(events(TextDelta("Cut"), TurnEnd(reply="Cut", interrupted=True,
                                                                  media=(Media(path="/m/qr.png"),))))
    assert "qr.png" not in term.text() and "interrupted" in term.text()


async def test_one_shot_prints_bare_paths_on_stdout_and_refusals_on_stderr():
    from hermes_gateway import Media

    out, err = io.StringIO(), io.StringIO()
    media = (Media(path="/m/qr.png", caption="Scan"), Media(filename="key.pem", refused="file not found"))
    await ReplyRenderer(PlainSink(out), PlainSink(err), RenderOptions(boxed=False, spinner=False, tool_lines=False,
                                                                      media_paths_only=True),
                        same_sink=False).render(events(TextDelta("Here."), TurnEnd(reply="Here.", media=media)))
    assert out.getvalue() == "Here.\n/m/qr.png\n"
    assert err.getvalue() == "📎 key.pem (file not found)\n"
