"""The interactive chat: a prompt with history, slash commands, and one reply at a time.

The prompt (prompt_toolkit) owns the terminal while the person types; the
reply renderer owns it while the agent answers. They never overlap, so a
streamed reply cannot corrupt the prompt, and a half-written line of the
reply is never redrawn over by it.

The conversation lives in the conversation store under ``("cli", "local")``:
the chat continues where the last run left off (saying so in one quiet
line), every finished turn is recorded, and ``/new`` starts a fresh one
(the old one stays listed by ``hermes-gateway history``). What goes to the
model is bounded by the same history policy as on every chat platform.

Ctrl-C means "stop what is happening": during a reply it stops the reply
(the agent is interrupted; if it has not finished within a moment, the turn
is cancelled, which closes the upstream request); at a prompt with text it
clears the text; at an empty prompt it leaves, like Ctrl-D.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings

from ..config import Config, data_dir
from ..events import TurnEnd
from ..content.downloads import human_size
from ..content.file_content import MediaSettings
from ..content.history_media import history_for_model
from ..messages.incoming import Incoming
from ..content.local_files import file_attachment
from ..content.turn_content import turn_content, with_stored_user
from ..store.base import ConversationKey, ConversationStore, StoreError
from ..store.policy import bound_history
from .moment import when
from .render import STYLE_ERROR, STYLE_LABEL, STYLE_NOTE, RenderOptions, ReplyRenderer
from .sinks import TerminalSink
from .terminal_mode import on_signals, quiet_keyboard
from .turn import box_label, chat_mcp_servers, clip, close_agent, describe_model, make_agent, one_line

log = logging.getLogger(__name__)

#: After the first Ctrl-C the agent gets this long to end the turn itself before it is cancelled.
INTERRUPT_GRACE_SECONDS = 0.5
PROMPT: StyleAndTextTuples = [("fg:ansicyan bold", "› ")]
#: The terminal's one conversation in the store.
CLI_KEY = ConversationKey("cli", "local")


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Callable[["ChatSession", str], Awaitable[bool]]  # returns False to leave the chat


class SlashCompleter(Completer):
    """Completes ``/commands`` (and nothing else: ordinary messages get no pop-up)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def get_completions(self, document, complete_event):  # type: ignore[override]
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return
        for name in self.names:
            if name.startswith(text):
                yield Completion(name, start_position=-len(text))


class ChatSession:
    """One person, one terminal, one conversation at a time (``/new`` starts another)."""

    def __init__(self, config: Config, *, streaming: bool, history_path: Path | None = None,
                 store: ConversationStore | None = None, prompt_input: Any = None, prompt_output: Any = None) -> None:
        """``store=None``: the conversation is kept for this run only."""
        self.config = config
        self.streaming = streaming
        self.store = store
        self.messages: list[dict] = []
        self.attached: list[Any] = []  # files for the next message (``/attach PATH``)
        self._stored: str | list[dict] = ""  # the running turn's user content as history keeps it
        self._resumed = ""  # the "continuing ..." line, once resume() found a conversation
        self._agent: Any = None
        self._agent_future: asyncio.Future | None = None
        self._mcp: Any = None  # the config's MCP servers, while the chat runs
        self._mcp_start: asyncio.Future | None = None
        self.exit_code: int | None = None  # set when a signal says to leave
        self.prompt: PromptSession[str] = PromptSession(
            PROMPT,
            history=_history(history_path),
            key_bindings=_key_bindings(),
            completer=SlashCompleter(sorted(COMMANDS)),
            complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(),
            prompt_continuation=lambda width, line_number, soft_wrap: " " * width if not soft_wrap else "",
            input=prompt_input,
            output=prompt_output,
        )
        self.sink = TerminalSink(self.prompt.output)

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> int:
        try:
            await self.resume()  # a bad database is one line (by main) before anything is drawn
        except BaseException:
            await self.close()
            raise
        self.banner()
        if self._resumed:
            self.say(self._resumed)
        # MCP servers start in their own tasks (they do not hold up the prompt); their tools join when up.
        self._mcp = chat_mcp_servers(self.config)
        if self._mcp is not None:
            self._mcp_start = asyncio.ensure_future(self._mcp.start())
        # Importing the model client takes most of a second: do it while the person types.
        self._agent_future = asyncio.get_running_loop().run_in_executor(None, make_agent, self.config, self._mcp)
        try:
            while True:
                try:
                    text = await self.prompt.prompt_async()
                except (EOFError, KeyboardInterrupt):
                    return 0
                text = text.strip()
                if not text and not self.attached:  # Enter alone sends the attached files, if any
                    continue
                try:
                    if text.startswith("/"):
                        if not await self.command(text):
                            return 0
                        continue
                    await self.turn(text)
                except Exception as exc:  # a bug must cost one line, not the conversation
                    log.debug("the chat failed", exc_info=True)
                    self.say(f"✗ {one_line(exc)}", STYLE_ERROR)
                if self.exit_code is not None:
                    return self.exit_code
        finally:
            await self.close()

    async def resume(self) -> None:
        """Continue the terminal's last conversation, if there is one."""
        self._resumed = ""
        if self.store is None:
            return
        current = await self.store.current(CLI_KEY)
        if current is None:
            return
        self.messages = await self.store.history(CLI_KEY)  # what the model would be sent anyway
        count = f"{current.messages} message{'s' if current.messages != 1 else ''}"
        self._resumed = (f"continuing the conversation from {when(current.last_activity)} ({count}) "
                         f"— /new starts over")

    async def close(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            try:
                await store.close()
            except Exception:
                log.debug("closing the conversation store failed", exc_info=True)
        if self._agent is None and self._agent_future is not None and self._agent_future.done() \
                and not self._agent_future.cancelled() and self._agent_future.exception() is None:
            self._agent = self._agent_future.result()
        await close_agent(self._agent)
        mcp, self._mcp = self._mcp, None
        if self._mcp_start is not None and not self._mcp_start.done():
            self._mcp_start.cancel()
            await asyncio.gather(self._mcp_start, return_exceptions=True)
        if mcp is not None:
            await mcp.stop()

    def banner(self) -> None:
        """One line: who answers, and where to find help (a new user's first sight of the gateway)."""
        self.sink.fragments([(STYLE_LABEL, "hermes"), (STYLE_NOTE, f" · {describe_model(self.config)} · /help\n")])

    async def command(self, text: str) -> bool:
        name, _, rest = text.partition(" ")
        command = COMMANDS.get(name.lower())
        if command is None:
            self.say(f"unknown command {name}; /help lists the commands", STYLE_ERROR)
            return True
        return await command.run(self, rest.strip())

    def say(self, line: str, style: str = STYLE_NOTE) -> None:
        if not self.sink.at_line_start:
            self.sink.text("\n")
        self.sink.styled(style, line + "\n")

    # -- one turn ------------------------------------------------------------------------------

    async def turn(self, text: str) -> TurnEnd | None:
        """Ask the agent, draw the reply, keep the conversation; errors become one line."""
        self._stored = text
        renderer = ReplyRenderer(self.sink, self.sink, RenderOptions(
            streaming=self.streaming, label=box_label(self.config),
            reasoning_starts_open=self.config.model.reasoning_starts_open))
        task = asyncio.ensure_future(self._answer(text, renderer))
        stopper = _ReplyStopper(lambda: self._agent, task)
        with quiet_keyboard(), on_signals({signal.SIGINT: stopper.press,
                                           signal.SIGTERM: lambda: self._terminate(task, signal.SIGTERM),
                                           signal.SIGHUP: lambda: self._terminate(task, signal.SIGHUP)}):
            await asyncio.wait({task})
        stopper.disarm()
        if task.cancelled():
            final = None
        elif (exc := task.exception()) is not None:
            log.debug("the turn failed", exc_info=exc)
            self.say(f"✗ {one_line(exc)}", STYLE_ERROR)
            return None
        else:
            final = task.result()
        if final is not None and final.error:
            self.say(f"✗ {clip(final.error)}", STYLE_ERROR)
        await self._remember(text, final)
        return final

    def _terminate(self, task: asyncio.Future, signum: int) -> None:
        """Told to quit mid-reply: stop the reply, then leave through the normal exit path."""
        self.exit_code = 128 + signum
        task.cancel()

    async def _answer(self, text: str, renderer: ReplyRenderer) -> TurnEnd | None:
        agent = await self.agent()
        cfg = self.config.store
        history = bound_history(self.messages, cfg.history_messages, cfg.history_chars)  # the one policy
        content: str | list[dict] = text
        if self.attached or any(isinstance(m.get("content"), list) for m in history):
            # the same path as a chat's files: limits, the media directory, images and documents for the model
            settings = MediaSettings.from_config(self.config)
            files, self.attached = self.attached, []
            turn = await turn_content([Incoming("cli", "local", text, attachments=tuple(files))], settings)
            for line in turn.lines:
                self.say(line, STYLE_ERROR)
            history = await history_for_model(history, settings)
            content, self._stored = turn.model, turn.stored
        from ..approvals.local import terminal_approver

        approver = terminal_approver(self.config, self._ask_yes_no)  # tools.approval: asked here, y/n
        return await renderer.render(agent.astream(content, history=history, approver=approver))

    async def _ask_yes_no(self, question: str) -> str:
        """One line typed at the prompt (a tool waiting for approval); the chat's own prompt comes back after."""
        message = self.prompt.message  # prompt_async(question) would keep the question as the prompt
        try:
            return await self.prompt.prompt_async(question)
        finally:
            self.prompt.message = message

    async def agent(self) -> Any:
        """The agent built in the background at start (or now, if that failed: the error is shown)."""
        if self._mcp_start is not None:  # the first turn waits (bounded) for the MCP servers, as `run` does
            start, self._mcp_start = self._mcp_start, None
            await start
        if self._agent is None:
            future, self._agent_future = self._agent_future, None
            self._agent = await future if future is not None else make_agent(self.config, self._mcp)
        return self._agent

    async def _remember(self, text: str, final: TurnEnd | None) -> None:
        """Add the turn (``TurnEnd.messages``: the user message, the replies, tool results) to the
        conversation and the store; a failed turn leaves both unchanged, so the message can simply be
        sent again. A store that fails costs one line: the chat goes on, remembered for this run."""
        if final is None or final.error:
            return
        turn = with_stored_user(list(final.messages), self._stored)
        if not turn:
            turn = [{"role": "user", "content": self._stored}]
            if final.reply:
                turn.append({"role": "assistant", "content": final.reply})
        self.messages.extend(turn)
        if self.store is not None:
            try:
                await self.store.record_turn(CLI_KEY, turn)
            except StoreError as exc:
                self.say(f"✗ not saved: {exc}", STYLE_ERROR)


class _ReplyStopper:
    """First Ctrl-C: ask the agent to stop, cancel shortly after if it has not. Second: cancel now."""

    def __init__(self, current_agent: Callable[[], Any], task: asyncio.Future) -> None:
        self.current_agent = current_agent
        self.task = task
        self.presses = 0
        self._deadline: asyncio.TimerHandle | None = None

    def press(self) -> None:
        self.presses += 1
        if self.task.done():
            return
        agent = self.current_agent()
        if self.presses > 1 or agent is None:  # a second press, or no agent yet: stop right now
            self.task.cancel()
            return
        try:
            agent.interrupt()
        except Exception:
            log.debug("agent.interrupt() failed; cancelling the turn", exc_info=True)
            self.task.cancel()
            return
        self._deadline = asyncio.get_running_loop().call_later(INTERRUPT_GRACE_SECONDS, self.task.cancel)

    def disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()


def _history(path: Path | None) -> History:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.touch(mode=0o600)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()


def default_history_path() -> Path:
    """The prompt's own history (what was typed, for the up arrow), in the data directory."""
    return data_dir() / "chat_history"


def _key_bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("c-c")
    def _(event) -> None:
        """Ctrl-C clears typed text, like a shell; at an empty prompt it leaves."""
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=EOFError())

    @kb.add("escape", "enter")
    def _(event) -> None:
        """Esc Enter (or Alt-Enter) starts a new line instead of sending."""
        event.app.current_buffer.insert_text("\n")

    return kb


# -- slash commands ------------------------------------------------------------------------------

async def _new(session: ChatSession, _: str) -> bool:
    session.messages = []
    if session.store is not None:
        await session.store.new_conversation(CLI_KEY)
    session.say("new conversation: the agent has forgotten what was said before")
    return True


async def _help(session: ChatSession, _: str) -> bool:
    for command in sorted(COMMANDS.values(), key=lambda c: c.name):
        if command.name in ALIASES:
            continue
        session.say(f"  {command.name:<10} {command.help}", "")
    session.say(f"  {'Ctrl-C':<10} stop a reply; at an empty prompt, leave (so does Ctrl-D)", "")
    session.say(f"  {'Esc Enter':<10} start a new line in your message", "")
    if session.streaming:
        session.say("  Replies stream as they are written.")
    else:
        session.say("  Replies appear whole. To watch them being written, set")
        session.say("  `streaming: {cli: true}` in config.yaml or start with --stream.")
    session.say(f"  Model: {describe_model(session.config)}")
    return True


async def _quit(session: ChatSession, _: str) -> bool:
    return False


async def _attach(session: ChatSession, path: str) -> bool:
    """``/attach PATH``: a file for the next message; ``/attach`` alone lists them, ``/attach clear`` drops them."""
    if not path:
        if not session.attached:
            session.say("nothing attached; /attach PATH adds a file (an image, a PDF, a text file) to your next message")
        for file in session.attached:
            session.say(f"  📎 {file.filename} ({file.kind}, {human_size(file.size or 0)})", "")
        return True
    if path == "clear":
        session.attached = []
        session.say("attachments dropped")
        return True
    path = path.strip().strip("'\"")
    try:
        file = file_attachment(path)
    except OSError as exc:
        session.say(f"✗ cannot attach {path}: {exc.strerror or exc}", STYLE_ERROR)
        return True
    session.attached.append(file)
    session.say(f"📎 {file.filename} ({file.kind}, {human_size(file.size or 0)}) goes with your next message")
    return True


ALIASES = {"/exit"}
COMMANDS: dict[str, Command] = {
    "/new": Command("/new", "start a fresh conversation", _new),
    "/help": Command("/help", "show this help", _help),
    "/attach": Command("/attach", "attach a file to your next message (/attach PATH; alone: list)", _attach),
    "/quit": Command("/quit", "leave the chat (also /exit)", _quit),
    "/exit": Command("/exit", "leave the chat", _quit),
}
