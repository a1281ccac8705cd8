"""Every surface shows the same reply: random texts, random chunkings, both values of the flag.

The same raw chunks go to (a) the reasoning filter, (b) the delivery core on
the reference platform (its final screen and every preview it showed), (c)
the API server's two SSE writers (the bytes a client receives), (d) the
terminal renderer writing to a pipe, and (e) the final post-processing
(``TurnEnd.reply``). Their visible text must agree.

The one documented exception is a reply that opens inside reasoning while
``model.reasoning_starts_open`` is off: text that was already shown when
its lone closing tag arrives cannot be known as reasoning earlier. Then
every surface still ends with the final text, and each does what it can
with what it already showed (see ``hermes_gateway._core.reasoning``).
"""

from __future__ import annotations

import asyncio
import io
import json

from hypothesis import HealthCheck, event, given, settings, strategies as st

from hermes_gateway import RateBudget, StreamSettings, make_plugins
from hermes_gateway._core.api_server.chat_stream import ChatChunks, write_chat_stream
from hermes_gateway._core.api_server.reply_text import RETRACTED_GAP
from hermes_gateway._core.api_server.responses_stream import ResponseShape, write_responses_stream
from hermes_gateway._core.cli.render import RenderOptions, ReplyRenderer
from hermes_gateway._core.cli.sinks import PlainSink
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery, deliver_events
from hermes_gateway._core.delivery.ledger import EMPTY_REPLY
from hermes_gateway._core.events import TextDelta, TurnEnd
from hermes_gateway._core.reasoning import ReasoningFilter, postprocess_reply, split_reasoning
from hermes_gateway.testing import ReferencePlatform, run_virtual

FRAGMENTS = ["<think>", "</think>", "</THINK>", "<THINK>", '<think type="a">', "<thinking>", "</thinking>",
             "<reasoning>", "</reasoning>", "</REASONING>", "<think/>", "<", "<thi", "</", ">", "nk>", "< think>",
             "<b>", " ", "  ", "\n", "\n\n", "word", "Hello", "b c", "x<y", "SECRET"]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join)
sizes = st.lists(st.integers(1, 10), min_size=1, max_size=20)


def chunked(raw: str, cut: list[int]) -> list[str]:
    out, i, n = [], 0, 0
    while i < len(raw):
        out.append(raw[i:i + cut[n % len(cut)]])
        i += cut[n % len(cut)]
        n += 1
    return out


def turn(chunks: list[str], starts_open: bool) -> list:
    """The events the agent yields for a turn streamed in these chunks."""
    raw = "".join(chunks)
    return [*(TextDelta(c) for c in chunks), TurnEnd(reply=postprocess_reply(raw, starts_open=starts_open), raw=raw)]


async def aiter(items, pause: float = 0.0):
    for item in items:
        yield item
        if pause:
            await asyncio.sleep(pause)


# -- the surfaces ------------------------------------------------------------------------------------------

def through_filter(chunks, starts_open):
    """(visible text emitted, visible text after the last retraction, retracted?)."""
    marks: list[int] = []
    pieces: list[str] = []
    f = ReasoningFilter(starts_open=starts_open, on_retract=lambda: marks.append(len(pieces)))
    for chunk in chunks:
        pieces.append(f.feed(chunk))
    pieces.append(f.finish()[1])
    after = marks[-1] if marks else 0
    return "".join(pieces), "".join(pieces[after:]), bool(marks)


def through_chat(chunks, starts_open):
    """(final screen, every text any message showed) on the reference platform."""
    ref = ReferencePlatform(budgets={"default": RateBudget(rate=50.0, burst=10)})
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    config = parse_config({"model": {"reasoning_starts_open": starts_open}}, env={})
    settings_ = StreamSettings(enabled=True, edit_interval=1.0, min_tokens=1, cursor=" ▌")

    async def main():
        session = Delivery(plugins, config).session("reference", "c", settings=settings_)
        return await deliver_events(aiter(turn(chunks, starts_open), pause=0.4), session)

    report = run_virtual(main())
    assert report.delivered
    chat = ref.chat("c")
    return "".join(chat.screen), [t for m in chat.messages for t in m.history]


class WireSink:
    """The SSE writers' transport, kept as bytes (what the client's socket receives)."""

    def __init__(self) -> None:
        self.data = b""

    async def write(self, data: bytes, *, then_wait: bool = False) -> None:
        self.data += data


def through_chat_completions(chunks, starts_open):
    sink = WireSink()

    async def main():
        await write_chat_stream(sink, aiter(turn(chunks, starts_open)), ChatChunks("chatcmpl-x", "m"),
                                include_usage=False, tool_progress=False, on_text=lambda n: None,
                                shutting_down=lambda: False, starts_open=starts_open,
                                expose_reasoning=True)  # api_server.expose_reasoning: where does reasoning go

    asyncio.run(main())
    content, reasoning = [], []
    for line in sink.data.decode().split("\n"):
        if line.startswith("data: {"):
            for choice in json.loads(line[len("data: "):])["choices"]:
                content.append(choice["delta"].get("content") or "")
                reasoning.append(choice["delta"].get("reasoning_content") or "")
    assert sink.data.endswith(b"data: [DONE]\n\n")
    return "".join(content), "".join(reasoning)


def through_responses(chunks, starts_open):
    sink = WireSink()
    shape = ResponseShape("resp_x", "msg_x", "m", instructions=None, previous_response_id=None, store=False)

    async def main():
        await write_responses_stream(sink, aiter(turn(chunks, starts_open)), shape, tool_progress=False,
                                     on_text=lambda n: None, shutting_down=lambda: False, starts_open=starts_open)

    asyncio.run(main())
    deltas, done = [], None
    for frame in sink.data.decode().split("\n\n"):
        lines = frame.split("\n")
        if lines[0] == "event: response.output_text.delta":
            deltas.append(json.loads(lines[1][len("data: "):])["delta"])
        elif lines[0] == "event: response.output_text.done":
            done = json.loads(lines[1][len("data: "):])["text"]
    assert done is not None
    return "".join(deltas), done


def through_terminal(chunks, starts_open):
    """(what a pipe receives, the notes) from the terminal renderer in one-shot form."""
    out, notes = io.StringIO(), io.StringIO()
    renderer = ReplyRenderer(PlainSink(out), PlainSink(notes),
                             RenderOptions(boxed=False, spinner=False, reasoning_starts_open=starts_open),
                             same_sink=False)

    async def main():
        await renderer.render(aiter(turn(chunks, starts_open), pause=0.02))

    run_virtual(main())
    return out.getvalue(), notes.getvalue()


# -- the property -------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, sizes, st.booleans())
def test_every_surface_shows_the_final_text(raw, cut, starts_open):
    chunks = chunked(raw, cut)
    final = postprocess_reply(raw, starts_open=starts_open)                        # (e)
    emitted, after, retracted = through_filter(chunks, starts_open)                # (a)
    screen, previews = through_chat(chunks, starts_open)                          # (b)
    content, reasoning = through_chat_completions(chunks, starts_open)            # (c)
    deltas, done = through_responses(chunks, starts_open)
    piped, notes = through_terminal(chunks, starts_open)                          # (d)

    event(f"starts_open={starts_open}, retracted={retracted}, previewed={bool(previews)}, final={bool(final)}")
    assert after == final
    # The chat ends with the final text (a message that showed a preview of a reply that turned out empty
    # says so rather than vanish).
    assert screen == (final or (EMPTY_REPLY if previews else "")), "the chat ends with the final text"
    assert piped.endswith(final + "\n" if final else "")
    if not retracted:
        assert emitted == content == deltas == done == final
        assert piped == (final + "\n" if final else "")
        assert all(final.startswith(p.removesuffix(" ▌").rstrip()) for p in previews), previews
        assert reasoning == split_reasoning(raw, starts_open=starts_open)[0]
        assert "reasoning" not in notes
    else:
        assert not starts_open, "with the flag nothing shown is ever taken back"
        shown = emitted[:len(emitted) - len(after)]
        gap = RETRACTED_GAP if shown and final else ""
        assert content == deltas == done == shown + gap + final, "SSE keeps what it sent; the reply follows"
        assert "model.reasoning_starts_open" in notes
