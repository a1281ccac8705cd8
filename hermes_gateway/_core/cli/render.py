"""Render one agent turn (a stream of ``hermes_gateway._core.events``) into a terminal.

What a person sees, in order: a spinner until the first word; a
``🔧 calling <tool>`` line the moment a tool call's name is known; the
reply inside a box whose top border appears with the first visible text and
whose bottom border closes it after the last; then one line per media item
a tool returned (``📎 image: /path/to/qr.png — caption``; in one-shot
mode just the path or URL, on stdout, so a script can use it). Reasoning never appears: the
text goes through :class:`~hermes_gateway._core.reasoning.ReasoningFilter`, the
filter of the final post-processing (``options.reasoning_starts_open`` is
``model.reasoning_starts_open``).

Deltas are not written one by one: they collect in a buffer that is written
at most once per ``batch_interval`` (about 50 ms), the first one at once.
Token rates of 50-100/s would otherwise mean as many terminal writes and
flushes per second, which flickers and costs more than generating them.

Nothing here polls: a write is scheduled with ``loop.call_later`` only when
text is waiting, and the spinner's timer runs only while it is visible.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import AsyncIterator

from prompt_toolkit.utils import get_cwidth

from ..reasoning import ReasoningFilter
from ..events import StreamEvent, StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd
from .sinks import Sink
from .wrap import StreamWrapper

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_INTERVAL = 0.1

STYLE_BORDER = "fg:ansibrightblack"
STYLE_LABEL = "fg:ansicyan bold"
STYLE_TOOL = "fg:ansiyellow"
STYLE_NOTE = "fg:ansibrightblack italic"
STYLE_ERROR = "fg:ansired"
STYLE_MEDIA = "fg:ansigreen"


@dataclass(frozen=True)
class RenderOptions:
    """How one turn is shown. One-shot mode turns the box and spinner off."""

    streaming: bool = True
    boxed: bool = True
    spinner: bool = True
    tool_lines: bool = True
    label: str = "hermes"
    batch_interval: float = 0.05
    reasoning_starts_open: bool = False  # model.reasoning_starts_open: replies open inside reasoning
    media_paths_only: bool = False  # one-shot: each media item is its bare path or URL on ``out``


class ReplyRenderer:
    """Consumes one turn's events and draws them; ``render`` returns the turn's ``TurnEnd``.

    ``out`` receives the reply; ``notes`` (tool lines, spinner, "interrupted")
    may be another sink (stderr in one-shot mode) or None to drop them.
    """

    def __init__(self, out: Sink, notes: Sink | None = None, options: RenderOptions | None = None,
                 *, same_sink: bool | None = None) -> None:
        self.out = out
        self.notes = notes
        self.options = options or RenderOptions()
        self._same_sink = notes is out if same_sink is None else same_sink
        self._filter = self._new_filter()
        # Prose in the box is wrapped between words; plain output (a pipe) stays byte for byte.
        self._wrap = StreamWrapper(lambda: self.out.columns) if self.options.boxed else None
        self._pending: list[str] = []
        self._shown = ""             # visible text written (or queued) since the turn or last reset began
        self._box_open = False
        self._text_started = False
        self._after_note = False     # the last line on screen is a tool line, not reply text
        self._last_write = 0.0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._spinner_handle: asyncio.TimerHandle | None = None
        self._spinner_visible = False
        self._spinner_frame = 0
        self._spinner_label = "thinking…"
        self._loop: asyncio.AbstractEventLoop | None = None
        self.final: TurnEnd | None = None
        self.cancelled = False

    # -- the turn ------------------------------------------------------------------------------

    async def render(self, events: AsyncIterator[StreamEvent]) -> TurnEnd | None:
        """Draw every event until ``TurnEnd``; on cancellation, close the box around what was shown.

        The event iterator is closed on the way out, so cancelling this
        coroutine also closes the agent's stream (and its upstream request).
        """
        self._loop = asyncio.get_running_loop()
        self._start_spinner("thinking…")
        try:
            async with _closing(events):
                async for event in events:
                    self.handle(event)
                    if isinstance(event, TurnEnd):
                        break
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self._finish()
        return self.final

    def handle(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._visible(self._filter.feed(event.text))
        elif isinstance(event, ToolCallStarted):
            self._tool_line(f"🔧 calling {event.name}", STYLE_TOOL)
            self._start_spinner(f"running {event.name}…")
        elif isinstance(event, ToolCallFinished):
            mark = "✓" if event.ok else "✗"
            summary = " ".join(event.summary.split())
            self._tool_line(f"   {mark} {event.name}" + (f": {summary}" if summary else ""), STYLE_NOTE,
                            truncate=True)
            self._start_spinner("thinking…")
        elif isinstance(event, StreamReset):
            self._reset(event.reason)
        elif isinstance(event, TurnEnd):
            self._visible(self._filter.finish()[1])
            self.final = event

    # -- text ----------------------------------------------------------------------------------

    def _visible(self, text: str) -> None:
        if not self._text_started:
            text = text.lstrip()
            if not text:
                return
            self._text_started = True
        self._shown += text
        if not self.options.streaming:
            return
        if self._after_note:
            # A tool line just ended a line of its own: the blank lines the agent puts
            # between model calls would only push the answer away from it.
            text = text.lstrip("\n")
            if not text:
                return
            self._after_note = False
        self._pending.append(text)
        if self._flush_handle is None:
            assert self._loop is not None
            wait = self._last_write + self.options.batch_interval - time.monotonic()
            if wait <= 0:
                self._flush()
            else:
                self._flush_handle = self._loop.call_later(wait, self._flush)

    def _flush(self, complete: bool = False) -> None:
        """Write the buffered text; ``complete`` also releases a word the wrapper is holding back."""
        self._flush_handle = None
        if not self._pending:
            if complete:
                self._write_reply("", complete=True)
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._write_reply(text, complete=complete)
        self._last_write = time.monotonic()

    def _write_reply(self, text: str, *, complete: bool) -> None:
        if self._wrap is not None:
            text = self._wrap.feed(text)
            if complete:
                text += self._wrap.flush()
            elif self._filter.holding_space:  # the filter holds the space that ends the last word
                text += self._wrap.end_word()
        if text:
            self._open_box()
            self.out.text(text)

    def _open_box(self) -> None:
        self._stop_spinner()
        if self._box_open:
            return
        self._box_open = True
        if self.options.boxed:
            label = f" {self.options.label} "
            width = self.out.columns
            self.out.fragments([(STYLE_BORDER, "╭─"), (STYLE_LABEL, label),
                                (STYLE_BORDER, "─" * max(0, width - 3 - get_cwidth(label)) + "╮\n")])

    def _close_box(self) -> None:
        self._stop_spinner()
        if not self._box_open:
            return
        self._box_open = False
        if not self.out.at_line_start:
            self.out.text("\n")
        if self.options.boxed:
            self.out.styled(STYLE_BORDER, "╰" + "─" * max(0, self.out.columns - 2) + "╯\n")

    # -- notes (tool lines, resets, interruption) ------------------------------------------------

    def _tool_line(self, line: str, style: str, *, truncate: bool = False) -> None:
        if self.notes is None or not self.options.tool_lines:
            return
        self._flush_now()
        self._stop_spinner()
        if self._same_sink and not self.out.at_line_start:
            self.out.text("\n")
        if truncate:
            line = _fit_cells(line, max(10, self.notes.columns - 1))
        self.notes.styled(style, line + "\n")
        self._line_started_elsewhere()

    def _line_started_elsewhere(self) -> None:
        if self._same_sink:
            self._after_note = True
            if self._wrap is not None:
                self._wrap.line_started_elsewhere()

    def _note(self, line: str, style: str = STYLE_NOTE) -> None:
        """A line about the reply (not part of it): dropped where notes have no place (a pipe)."""
        if self.notes is None:
            return
        if self._same_sink and not self.out.at_line_start:
            self.out.text("\n")
        elif not self.notes.at_line_start:
            self.notes.text("\n")
        self.notes.styled(style, _fit_cells(line, max(10, self.notes.columns - 1)) + "\n")
        self._line_started_elsewhere()

    def _reset(self, reason: str) -> None:
        """The agent is replacing the text shown so far: say so, then show the new text below it.

        A terminal cannot unprint scrolled text, so the honest display is a
        visible seam rather than a silent rewrite.
        """
        self._flush_now()
        if self._shown and self.options.streaming:
            self._stop_spinner()
            if not self._same_sink and not self.out.at_line_start:
                self.out.text("\n")  # a pipe cannot unprint: at least start the replacement on its own line
            self._note(f"↻ {reason or 'the stream broke part-way'} — the full reply follows")
        self._filter = self._new_filter()
        self._shown = ""
        self._text_started = False
        self._start_spinner("retrying…")

    def _new_filter(self) -> ReasoningFilter:
        return ReasoningFilter(starts_open=self.options.reasoning_starts_open, on_retract=self._reasoning_shown)

    def _reasoning_shown(self) -> None:
        """A lone closing tag: the text shown so far was reasoning. Say so; the reply follows below.

        Only without ``model.reasoning_starts_open`` (see ``ReasoningFilter``).
        """
        self._flush_now()
        if self._shown and self.options.streaming:
            self._stop_spinner()
            if not self._same_sink and not self.out.at_line_start:
                self.out.text("\n")
            self._note("↑ that was reasoning: set model.reasoning_starts_open")
        self._shown = ""
        self._text_started = False

    # -- the end -------------------------------------------------------------------------------

    def _finish(self) -> None:
        """Show what is still buffered, reconcile with the final reply, close the box."""
        self._flush_now()
        final = self.final
        if final is not None and not self.options.streaming:
            if final.reply:
                self._write_reply(final.reply, complete=True)
        elif final is not None:
            self._reconcile(final)
        interrupted = self.cancelled or (final is not None and final.interrupted)
        if interrupted:
            self._stop_spinner()
            self._note("⏹ interrupted")
        self._close_box()
        if final is not None and final.media and not interrupted:
            self._media(final)
        self._stop_spinner()
        self.out.flush()

    def _media(self, final: TurnEnd) -> None:
        """After the reply: where each item the tools produced is (a file in the media directory, or a link)."""
        for item in final.media:
            where = item.path if item.path is not None else item.url
            if where is None:  # refused (e.g. outside the media directory): say so, as a chat would
                self._note(item.fallback_line())
            elif self.options.media_paths_only:
                self.out.text(where + "\n")
            else:
                caption = item.caption.strip().splitlines()[0] if item.caption.strip() else ""
                self.out.styled(STYLE_MEDIA, f"📎 {item.kind}: {where}" + (f" — {caption}" if caption else "") + "\n")

    def _reconcile(self, final: TurnEnd) -> None:
        """Make the screen end with ``final.reply``: print a missing tail, or the reply after a note."""
        reply = final.reply.lstrip()
        shown = self._shown
        if not reply or reply == shown or reply == shown.rstrip():
            return
        if reply.startswith(shown):
            self._write_reply(reply[len(shown):], complete=True)
            return
        if final.interrupted:
            return  # the reply was cut short; what was shown stays as it is
        if not shown:
            self._write_reply(reply, complete=True)
            return
        self._note("↻ the final reply differs from the streamed text; here it is in full:")
        self._write_reply(reply, complete=True)

    def _flush_now(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
        self._flush(complete=True)

    # -- spinner -------------------------------------------------------------------------------

    def _start_spinner(self, label: str) -> None:
        self._spinner_label = label
        if not self.options.spinner or self.notes is None or self._spinner_handle is not None:
            return
        if self._box_open and self._same_sink and not self.out.at_line_start:
            return  # never draw over a half-written line of the reply
        self._spin()

    def _spin(self) -> None:
        assert self.notes is not None and self._loop is not None
        frame = SPINNER_FRAMES[self._spinner_frame % len(SPINNER_FRAMES)]
        self._spinner_frame += 1
        self.notes.erase_line()
        self.notes.styled(STYLE_NOTE, f"{frame} {self._spinner_label}")
        self._spinner_visible = True
        self._spinner_handle = self._loop.call_later(SPINNER_INTERVAL, self._spin)

    def _stop_spinner(self) -> None:
        if self._spinner_handle is not None:
            self._spinner_handle.cancel()
            self._spinner_handle = None
        if self._spinner_visible and self.notes is not None:
            self.notes.erase_line()
            self._spinner_visible = False


def _fit_cells(line: str, cells: int) -> str:
    """``line`` cut with an ellipsis so it takes at most ``cells`` columns (emoji count two)."""
    if get_cwidth(line) <= cells:
        return line
    used, out = 1, []
    for char in line:
        used += get_cwidth(char)
        if used > cells:
            break
        out.append(char)
    return "".join(out) + "…"


@contextlib.asynccontextmanager
async def _closing(events: AsyncIterator[StreamEvent]):
    """Like ``contextlib.aclosing`` but tolerant of iterators without ``aclose``."""
    try:
        yield events
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
