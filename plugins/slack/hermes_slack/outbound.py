"""Showing a reply in a Slack thread: native AI streaming, or posting and editing.

Two transports, chosen per reply and per message:

* **native** (``chat.startStream`` / ``chat.appendStream`` /
  ``chat.stopStream``): each append carries only the text that is new since
  the last one, so the plugin keeps, per message, what it has streamed.
  Previews the core renders with a cursor or a tool-progress line are cut
  back to their text first; when the core's next preview is not an
  extension of what was streamed (a reset, a closed code fence), nothing is
  appended and the final text repairs the message: ``chat.stopStream``
  then ``chat.update``. A stream Slack already expired
  (``message_not_in_streaming_state``, after ~5 minutes) is finished with
  ``chat.update`` on its ``ts``. A message never stays "streaming": the
  final text goes through ``chat.stopStream``, and starting the next
  message of a long reply stops the previous one.
* **edit** (``chat.postMessage`` then ``chat.update``): what the core asks
  for, as is.

When ``chat.startStream`` is refused (missing scope, the AI setting off,
an unsupported channel), the same call falls back to ``chat.postMessage``,
so nothing is shown twice, and ``native_streaming: auto`` remembers it for
the workspace. Native streaming needs a thread; a reply without one uses
the edit transport. So does a reply whose stream would be one start too
many for Slack's ~20 ``chat.startStream`` a minute per workspace
(:mod:`.starts`): the plugin never waits for a stream to be allowed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from hermes_gateway import DeliveryError, MessageRef, Stream

from .errors import NATIVE_UNAVAILABLE_ERRORS, error_code, translate
from .starts import StartWindow

log = logging.getLogger(__name__)

#: What the core puts between a preview's text and its tool-progress line (delivery.session.STATUS_GAP).
STATUS_GAP = "\n\n"
STATUS_MARK = "🔧 "
NOT_STREAMING = "message_not_in_streaming_state"
CONFLICT = "streaming_state_conflict"
#: When Slack refuses a final text as msg_too_long (it measures differently from the declared 4,000
#: characters), the text is split into parts of at most this many characters.
SPLIT_CHARS = 2000


@dataclass
class SlackMessage:
    """One message of a reply: how it is sent, what Slack shows in it, and what it should show."""

    ts: str
    native: bool                  # started with chat.startStream
    live: bool = False            # a native stream Slack still considers open
    shown: str = ""               # the text Slack shows now (streamed, or set by chat.update)
    wanted: str = ""              # the newest text the core asked this message to show (no cursor)
    gone: bool = False            # deleted in Slack (message_not_found)


@dataclass
class ReplyState:
    """The plugin's scratch space for one reply (kept in ``stream.state``)."""

    messages: dict[str, SlackMessage] = field(default_factory=dict)
    native_off: bool = False      # this reply fell back to the edit transport


class Outbound:
    """The Web API calls behind the stream hooks, for one app."""

    def __init__(self, client: Callable[[], Any], *, native: Callable[[], bool],
                 recipient: Callable[[str, str | None], tuple[str | None, str | None]],
                 joined: Callable[[str, str | None], None], starts: StartWindow | None = None) -> None:
        """``client()`` is the AsyncWebClient; ``native()`` whether native streaming may be tried now;
        ``recipient(channel, thread)`` the person and team a channel stream is for; ``joined`` notes
        a thread the bot has replied in; ``starts`` counts chat.startStream calls against Slack's limit."""
        self._client = client
        self._native = native
        self._recipient = recipient
        self._joined = joined
        self.native_refused = False   # remembered for the workspace under native_streaming: auto
        self.starts = starts or StartWindow()

    # ---------------------------------------------------------------- the hooks' work

    async def preview(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        state = _state(stream)
        visible = preview_text(stream, text)
        if message is None:
            await self._stop_live(stream, state)
            if self._use_native(stream, state):
                ref = await self._start(stream, state, visible)
                if ref is not None:
                    return ref
            return await self._post(stream, state, text)
        slack = state.messages.get(message.message_id)
        if slack is not None:
            slack.wanted = visible
        if slack is not None and slack.native and slack.live:
            if visible.startswith(slack.shown) and len(visible) > len(slack.shown):
                await self._append(stream, slack, visible[len(slack.shown):], repair=text)
            return message
        await self._update(stream, message.message_id, text, state)
        return message

    async def final(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        state = _state(stream)
        if message is None:
            await self._stop_live(stream, state)
            return await self._post(stream, state, text)
        slack = state.messages.get(message.message_id)
        if slack is not None and slack.native and slack.live:
            slack.wanted = text
            await self._stop(stream, slack)
            if slack.gone:  # the core sends the text anew
                raise DeliveryError("slack chat.stopStream: message_not_found (deleted)", retryable=False)
            if slack.shown == text:
                return message
        if slack is not None:
            slack.wanted = text
        try:
            await self._update(stream, message.message_id, text, state)
        except DeliveryError as exc:
            if _code(exc) != "msg_too_long":
                raise
            await self._split(stream, message.message_id, text, state)
        return message

    async def _split(self, stream: Stream, ts: str, text: str, state: ReplyState) -> None:
        """Slack measured the final text as too long for ``chat.update``: keep the first part in the
        message and post the rest after it in the thread, so nothing is lost and nothing shown twice."""
        parts = split_for_slack(text, SPLIT_CHARS)
        log.info("slack: chat.update said msg_too_long; the final text continues in %d more message(s)",
                 len(parts) - 1)
        await self._update(stream, ts, parts[0], state)
        for part in parts[1:]:
            await self._post(stream, state, part)

    # ---------------------------------------------------------------- native streaming

    def _use_native(self, stream: Stream, state: ReplyState) -> bool:
        return bool(stream.thread_id) and not state.native_off and not self.native_refused and self._native()

    async def _start(self, stream: Stream, state: ReplyState, visible: str) -> MessageRef | None:
        """Start a stream showing ``visible``; None when native streaming is refused (post instead)."""
        args: dict[str, Any] = {"channel": stream.chat_id, "thread_ts": stream.thread_id}
        if visible:
            args["markdown_text"] = visible
        if stream.chat_kind not in ("im", "private"):
            user, team = self._recipient(stream.chat_id, stream.thread_id)
            if user is None or team is None:  # without them a channel stream disappears: edit instead
                state.native_off = True
                return None
            args.update(recipient_user_id=user, recipient_team_id=team)
        start = self.starts.take()
        if start is None:  # Slack would answer 429: this reply does without the streaming animation
            state.native_off = True
            log.debug("slack: %d chat.startStream calls in the last %gs (Slack's limit per workspace); "
                      "this reply in %s uses chat.postMessage and chat.update",
                      self.starts.count, self.starts.period, stream.chat_id)
            return None
        try:
            answer = await self._call("chat_startStream", **args)
        except DeliveryError as exc:
            if exc.retryable:
                raise
            state.native_off = True
            if _code(exc) in NATIVE_UNAVAILABLE_ERRORS:
                self.native_refused = True
                log.info("slack: native streaming is not available here (%s); replies use chat.postMessage "
                         "and chat.update", _code(exc))
            else:
                log.info("slack: chat.startStream failed (%s); this reply uses chat.postMessage and chat.update",
                         _code(exc) or exc)
            return None
        finally:
            self.starts.answered(start)
        ts = str(answer["ts"])
        state.messages[ts] = SlackMessage(ts, native=True, live=True, shown=visible, wanted=visible)
        self._joined(stream.chat_id, stream.thread_id)
        return MessageRef(stream.chat_id, ts, stream.thread_id)

    async def _append(self, stream: Stream, slack: SlackMessage, suffix: str, *, repair: str) -> None:
        try:
            await self._call("chat_appendStream", channel=stream.chat_id, ts=slack.ts, markdown_text=suffix)
        except DeliveryError as exc:
            if _code(exc) != NOT_STREAMING:
                raise
            slack.live = False   # Slack expired it: carry on with chat.update on its ts
            log.info("slack: a stream in %s expired; finishing it with chat.update", stream.chat_id)
            await self._update(stream, slack.ts, repair, _state(stream))
            return
        slack.shown += suffix

    async def _stop(self, stream: Stream, slack: SlackMessage) -> None:
        """End a live stream with the rest of ``slack.wanted`` when it extends what was streamed."""
        wanted = slack.wanted
        args: dict[str, Any] = {"channel": stream.chat_id, "ts": slack.ts}
        rest = wanted[len(slack.shown):] if wanted.startswith(slack.shown) else ""
        if rest:
            args["markdown_text"] = rest
        try:
            await self._call("chat_stopStream", **args)
        except DeliveryError as exc:
            if _code(exc) not in (NOT_STREAMING, "message_not_found"):
                raise
            # expired: what it shows is repaired with chat.update by the caller; deleted: nothing to stop
            slack.live, slack.gone = False, _code(exc) == "message_not_found"
            return
        slack.live = False
        slack.shown += rest

    async def _stop_live(self, stream: Stream, state: ReplyState) -> None:
        """Before the next message of a reply: stop the stream still open, and make every natively
        started message show what it should (a cut the core moved back, a cursor left by a repair).

        Idempotent: after a 429 half-way, the core's retry finishes what is left."""
        for slack in list(state.messages.values()):
            if not slack.native or slack.gone:
                continue
            if slack.live:
                await self._stop(stream, slack)
            if slack.wanted and slack.shown != slack.wanted and not slack.gone:
                await self._update(stream, slack.ts, slack.wanted, state)

    # ---------------------------------------------------------------- the edit transport

    async def _post(self, stream: Stream, state: ReplyState, text: str) -> MessageRef:
        args: dict[str, Any] = {"channel": stream.chat_id, "markdown_text": text}
        if stream.thread_id:
            args["thread_ts"] = stream.thread_id
        answer = await self._call("chat_postMessage", **args)
        ts = str(answer["ts"])
        state.messages[ts] = SlackMessage(ts, native=False, shown=text, wanted=text)
        self._joined(stream.chat_id, stream.thread_id)
        return MessageRef(stream.chat_id, ts, stream.thread_id)

    async def _update(self, stream: Stream, ts: str, text: str, state: ReplyState) -> None:
        try:
            await self._call("chat_update", channel=stream.chat_id, ts=ts, markdown_text=text)
        except DeliveryError as exc:
            if _code(exc) != CONFLICT:
                raise
            # still streaming (e.g. a message of an earlier run): stop it, then edit
            await self._call("chat_stopStream", channel=stream.chat_id, ts=ts)
            if ts in state.messages:
                state.messages[ts].live = False
            await self._call("chat_update", channel=stream.chat_id, ts=ts, markdown_text=text)
        if ts in state.messages:
            state.messages[ts].shown = text

    # ---------------------------------------------------------------- one call

    async def _call(self, method: str, **args: Any) -> Any:
        """One Web API call; any failure becomes DeliveryError/RateLimited (the SDK error as context)."""
        client = self._client()
        name = method.replace("_", ".", 1)
        try:
            return await getattr(client, method)(**args)
        except Exception as exc:
            error = translate(exc, name)
            error.slack_code = error_code(exc)  # type: ignore[attr-defined]
            raise error from None


def preview_text(stream: Stream, text: str) -> str:
    """A preview without the core's cursor and tool-progress line: the text a native stream carries."""
    cursor = stream.settings.cursor
    if cursor and text.endswith(cursor):
        text = text[: -len(cursor)]
    gap = text.rfind(STATUS_GAP + STATUS_MARK)
    if gap >= 0 and "\n" not in text[gap + len(STATUS_GAP):]:
        text = text[:gap]
    elif text.startswith(STATUS_MARK) and "\n" not in text:
        text = ""
    return text


def split_for_slack(text: str, size: int) -> list[str]:
    """``text`` in parts of at most ``size`` characters, cut after a newline or a space when there is one."""
    parts: list[str] = []
    rest = text
    while len(rest) > size:
        cut = max(rest.rfind("\n", 0, size), rest.rfind(" ", 0, size))
        cut = cut + 1 if cut > size // 2 else size
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    parts.append(rest)
    return [p for p in parts if p] or [""]


def _state(stream: Stream) -> ReplyState:
    state = stream.state.get("slack")
    if state is None:
        state = stream.state["slack"] = ReplyState()
    return state


def _code(exc: DeliveryError) -> str:
    """Slack's error string behind a translated failure ("" for network trouble)."""
    return str(getattr(exc, "slack_code", ""))
