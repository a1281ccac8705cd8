"""Reasoning never appears in the terminal: the renderer's text on a pyte screen and on a pipe."""

from __future__ import annotations

import asyncio
import io

import pyte
import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.output.vt100 import Vt100_Output

from hermes_gateway._core.cli.render import RenderOptions, ReplyRenderer
from hermes_gateway._core.cli.sinks import PlainSink, TerminalSink
from hermes_gateway._core.events import TextDelta, TurnEnd
from hermes_gateway._core.reasoning import postprocess_reply

COLS, ROWS = 60, 30
SECRET = "SECRET"
LEAKS = {
    "attributes": ['<think type="analysis">', "The user wants ", SECRET, "</think>", "Hello", " there."],
    "upper case": ["<THINK>", SECRET, " plan", "</THINK>\n\n", "Hello there."],
    "split tags": ["<thi", "nking>", SECRET, "</thin", "king>", "Hello there."],
    "opened in the prompt": ["The user", " wants ", SECRET, " plans.\n", "</think>", "\n\nHello", " there."],
}


class Term:
    """A terminal the renderer draws on; ``text()`` is what a person reads on it."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.sink = TerminalSink(Vt100_Output(self.stream, lambda: Size(rows=ROWS, columns=COLS), term="xterm"))

    def text(self) -> str:
        screen = pyte.Screen(COLS, ROWS)
        pyte.Stream(screen).feed(self.stream.getvalue())
        return "\n".join(line.rstrip() for line in screen.display if line.strip())


async def turn(chunks, starts_open, pause=0.06):
    raw = "".join(chunks)
    for chunk in chunks:
        yield TextDelta(chunk)
        await asyncio.sleep(pause)  # past the renderer's batching: each chunk is drawn as it comes
    yield TurnEnd(reply=postprocess_reply(raw, starts_open=starts_open), raw=raw)


async def draw(chunks, *, starts_open=False, seen=None) -> Term:
    term = Term()
    renderer = ReplyRenderer(term.sink, term.sink, RenderOptions(reasoning_starts_open=starts_open))

    async def watched():
        async for event in turn(chunks, starts_open):
            yield event
            if seen is not None:
                seen.append(term.text())

    await renderer.render(watched())
    return term


@pytest.mark.parametrize("case", ["attributes", "upper case", "split tags"])
async def test_reasoning_never_appears_on_the_terminal(case):
    seen: list[str] = []
    term = await draw(LEAKS[case], seen=seen)
    assert "Hello there." in term.text()
    # ("thinking…" is the spinner's own word; a tag would show as "<think" or "nk>")
    assert not any(SECRET in screen or "<" in screen or ">" in screen for screen in [*seen, term.text()])


async def test_a_reply_opened_in_the_prompt_with_reasoning_starts_open_never_shows_its_reasoning():
    seen: list[str] = []
    term = await draw(LEAKS["opened in the prompt"], starts_open=True, seen=seen)
    assert "Hello there." in term.text()
    assert not any(SECRET in screen for screen in [*seen, term.text()])


async def test_without_the_flag_reasoning_already_shown_is_marked_and_the_reply_follows_once():
    text = (await draw(LEAKS["opened in the prompt"])).text()
    # A terminal cannot unprint: the reasoning shown before the lone </think> is labelled as such.
    note = text.index("↑ that was reasoning: set model.reasoning_starts_open")
    assert text.index(SECRET) < note < text.index("Hello there.")
    assert text.count("Hello there.") == 1
    assert "differs" not in text, "the reply is not printed a second time"


async def test_a_pipe_receives_exactly_the_final_reply():
    out = io.StringIO()
    renderer = ReplyRenderer(PlainSink(out), None, RenderOptions(boxed=False, spinner=False,
                                                                reasoning_starts_open=True))
    await renderer.render(turn(LEAKS["opened in the prompt"], True, pause=0))
    assert out.getvalue() == "Hello there.\n"
