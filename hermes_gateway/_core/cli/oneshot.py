"""One turn for scripts: ``hermes-gateway chat -m "..."`` or a message on a non-terminal stdin.

stdout carries the reply and nothing else (plus one final newline), then
the path (or URL) of each media item a tool returned, one per line. By
default it is written whole, once the reply is done, so ``$(hermes-gateway
-m hi)`` and ``> out.txt`` hold exactly the final reply even when a stream
broke part-way and was replaced. Streaming follows the same switches as the
terminal chat (``--stream``, ``streaming.cli``, ``streaming.enabled`` /
``HERMES_STREAMING_ENABLED``): with it on, the reply is written as it is
generated (``| tee`` shows words as they come); if the stream then breaks
and the agent replaces the reply, the partial text cannot be taken back from
a pipe: the replacement starts on a new line and stderr says so.
Tool progress goes to stderr when a person is watching it; an upstream error
is one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

from ..config import Config
from .render import RenderOptions, ReplyRenderer
from .sinks import PlainSink
from .turn import chat_mcp_servers, clip, close_agent, make_agent, one_line

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a C tool reports when its reader went away


async def run_oneshot(config: Config, message: str, *, streaming: bool,
                      stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Answer ``message`` once; return the process exit code."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    out = PlainSink(stdout, sanitize=_isatty(stdout))
    # stderr hears about a broken stream or an interruption always; about tools only when a person watches.
    notes = PlainSink(stderr, sanitize=True)
    renderer = ReplyRenderer(out, notes, RenderOptions(streaming=streaming, boxed=False, spinner=False,
                                                       tool_lines=_isatty(stderr),
                                                       reasoning_starts_open=config.model.reasoning_starts_open,
                                                       media_paths_only=True),
                              same_sink=False)
    agent = None
    mcp = chat_mcp_servers(config)
    try:
        if mcp is not None:
            await mcp.start()  # waits (bounded) for the servers, so this one turn sees their tools
        agent = make_agent(config, mcp)
        final = await renderer.render(agent.astream(message, history=[]))
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # never a traceback for a person; -v logs it
        log.debug("one-shot turn failed", exc_info=True)
        print(f"hermes-gateway: {one_line(exc)}", file=stderr)
        return EXIT_ERROR
    finally:
        await close_agent(agent)
        if mcp is not None:
            await mcp.stop()
    if final is None:
        print("hermes-gateway: the agent ended without a reply", file=stderr)
        return EXIT_ERROR
    if final.error:
        print(f"hermes-gateway: {clip(final.error)}", file=stderr)
        return EXIT_ERROR
    return EXIT_OK


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _silence_stdout() -> None:
    """The reader of our stdout is gone: point stdout at /dev/null so exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
