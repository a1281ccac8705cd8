"""Where the terminal renderer writes: a prompt_toolkit output, or a plain stream.

The renderer never touches ``sys.stdout`` directly. In the interactive chat
every byte goes through prompt_toolkit's ``Output`` (so escape sequences in
model text are neutralised and the prompt is never corrupted); in one-shot
mode a plain text stream gets the reply byte for byte, so a pipe receives
exactly what the model said.
"""

from __future__ import annotations

import re
import shutil
from typing import Protocol, TextIO

from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import print_formatted_text

#: C0 control characters other than newline and tab: a model must not ring
#: bells, move the cursor or clear the screen of the person reading it.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def terminal_safe(text: str) -> str:
    """Model text made harmless for a terminal (no escapes, no carriage returns)."""
    return _CONTROL.sub("", text)


class Sink(Protocol):
    """One destination for rendered text."""

    @property
    def columns(self) -> int: ...

    @property
    def at_line_start(self) -> bool: ...

    def text(self, text: str) -> None:
        """Reply text, written as is (after sanitising, where the sink is a terminal)."""

    def styled(self, style: str, text: str) -> None:
        """Decoration (borders, notes) in a prompt_toolkit style such as ``"fg:ansicyan"``."""

    def fragments(self, parts: list[tuple[str, str]]) -> None:
        """Several ``(style, text)`` pieces in one write (a border with its label)."""

    def erase_line(self) -> None:
        """Go back to column 0 and clear the line (used to remove the spinner)."""

    def flush(self) -> None: ...


class _LineTracker:
    """Remembers whether the cursor is at the start of a line, to close boxes cleanly."""

    _at_line_start = True

    @property
    def at_line_start(self) -> bool:
        return self._at_line_start

    def _track(self, text: str) -> None:
        if text:
            self._at_line_start = text.endswith("\n")


class TerminalSink(_LineTracker):
    """Writes through a prompt_toolkit ``Output``; styles become colours when the terminal has them."""

    def __init__(self, output: Output) -> None:
        self.output = output

    @property
    def columns(self) -> int:
        try:
            return max(20, self.output.get_size().columns)
        except Exception:  # an output without a size (a pipe): a conventional width
            return 80

    def text(self, text: str) -> None:
        text = terminal_safe(text)
        if not text:
            return
        # Raw-ish terminals do not turn \n into \r\n by themselves; prompt_toolkit's
        # own printer does the same. Output.write() also replaces ESC with "?".
        self.output.write(text.replace("\n", "\r\n"))
        self.output.flush()
        self._track(text)

    def styled(self, style: str, text: str) -> None:
        self.fragments([(style, text)])

    def fragments(self, parts: list[tuple[str, str]]) -> None:
        parts = [(style, terminal_safe(text)) for style, text in parts if text]
        if not parts:
            return
        print_formatted_text(FormattedText(parts), output=self.output, end="")
        self._track("".join(text for _, text in parts))

    def erase_line(self) -> None:
        self.output.write_raw("\r")
        self.output.erase_end_of_line()
        self.output.flush()
        self._at_line_start = True

    def flush(self) -> None:
        self.output.flush()


class PlainSink(_LineTracker):
    """A text stream (stdout of a one-shot turn): exact bytes, no colours, no cursor tricks."""

    def __init__(self, stream: TextIO, *, sanitize: bool = False) -> None:
        self.stream = stream
        self.sanitize = sanitize

    @property
    def columns(self) -> int:
        return shutil.get_terminal_size((80, 24)).columns

    def text(self, text: str) -> None:
        if self.sanitize:
            text = terminal_safe(text)
        if not text:
            return
        self.stream.write(text)
        self.stream.flush()
        self._track(text)

    def styled(self, style: str, text: str) -> None:
        self.text(text)

    def fragments(self, parts: list[tuple[str, str]]) -> None:
        self.text("".join(text for _, text in parts))

    def erase_line(self) -> None:
        """A plain stream cannot erase; nothing was drawn that needs it (no spinner here)."""

    def flush(self) -> None:
        self.stream.flush()
