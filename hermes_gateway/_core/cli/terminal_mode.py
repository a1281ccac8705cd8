"""The keyboard while a reply streams: keystrokes wait quietly, Ctrl-C interrupts.

Between prompts prompt_toolkit is not reading the keyboard, and a terminal
in its normal mode echoes whatever is typed straight into the reply being
drawn. So for the length of a reply, echo and line editing are switched
off (keys stay queued and become the next prompt's input: type-ahead), and
signals stay on so Ctrl-C arrives as SIGINT, which the chat turns into
"stop this reply" instead of "kill the program".
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Callable, Iterator, Mapping

try:
    import termios
except ImportError:  # pragma: no cover - not a POSIX terminal
    termios = None  # type: ignore[assignment]


@contextlib.contextmanager
def quiet_keyboard(fd: int | None = None) -> Iterator[None]:
    """No echo, no line discipline, signals kept; the previous mode comes back afterwards."""
    if termios is None:
        yield
        return
    if fd is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            fd = -1
    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        yield  # not a terminal: nothing to protect
        return
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ECHO | termios.ICANON) | termios.ISIG
    quiet[6] = list(saved[6])
    quiet[6][termios.VMIN] = 1
    quiet[6][termios.VTIME] = 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        # TCSANOW, not TCSAFLUSH: what was typed meanwhile is kept for the next prompt.
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


@contextlib.contextmanager
def on_signals(handlers: Mapping[int, Callable[[], None]]) -> Iterator[None]:
    """Call ``handlers[signal]`` on the event loop for each such signal while the block runs.

    Ctrl-C (SIGINT) then stops a reply instead of killing the program, and
    SIGTERM/SIGHUP end the program through the normal path, which puts the
    keyboard back the way it was rather than leaving a shell without echo.
    """
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    try:
        for signum, callback in handlers.items():
            try:
                loop.add_signal_handler(signum, callback)
            except (NotImplementedError, RuntimeError, ValueError):  # no signals here (Windows, a thread)
                continue
            installed.append(signum)
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
