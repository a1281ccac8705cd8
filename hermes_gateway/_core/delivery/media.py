"""A reply's media: sent after its text, each item exactly once, or shown as one line of text.

The session hands the turn's media items here twice:

* before the final text, :meth:`MediaSender.plan` sorts them: what the
  platform can send natively (its ``Platform.media`` limits: kind, size,
  URLs) goes to ``on_media`` later; everything else becomes a one-line
  fallback (the link, or the file name) that is appended to the reply's
  final text, so it goes through the text's ledger and is shown once;
* after the final text, :meth:`MediaSender.send` sends the sendable items
  in order, each one platform call charged to the chat's (and bot's)
  budget like any text call, 429s waited out, retryable failures retried.

Exactly once, per item (:class:`MediaEntry` is the media ledger):

* an item is sent until one call succeeds, then never again;
* a failure that says the upload **may have landed** (``maybe_delivered``)
  ends that item: it is never sent again and no fallback line follows,
  because the person may already see it. If it did not land, the person
  sees no attachment for it; the log and ``DeliveryReport.media_uncertain``
  say so;
* a failure for good (``retryable=False``, a plugin bug, retries used up)
  means the item cannot be sent: its fallback line is sent as a text
  message of its own (through ``on_stream_end``, with the same care), so
  the person is never left with nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..media import Media, MediaLimits
from ..media_dir import MediaDirectory
from ..platform import MessageRef, Stream
from .calls import call_into_chat
from .hooks import PlatformHooks
from .measure import Measure, longest_prefix_within
from .pacing import Pacer
from .observer import NO_OBSERVER, ReplyObserver

log = logging.getLogger(__name__)


@dataclass
class MediaEntry:
    """One item of a reply and what became of it."""

    media: Media
    state: str = "pending"         # pending | sent | uncertain | fallback | gave_up
    ref: MessageRef | None = None  # the attachment's message (or its fallback line's)
    note: str = ""                 # the fallback line, when it had to be one


@dataclass
class MediaPlan:
    """What :meth:`MediaSender.plan` decided: items for ``on_media``, lines for the final text."""

    send: list[MediaEntry] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class MediaSender:
    """Sends one reply's media items into its chat, after the text."""

    def __init__(self, hooks: PlatformHooks, stream: Stream, pacer: Pacer, *, directory: MediaDirectory | None,
                 measure: Measure, max_retries: int, max_rate_limits: int, label: str,
                 observer: ReplyObserver = NO_OBSERVER) -> None:
        self.hooks = hooks
        self.observer = observer  # /metrics counts attachment calls like text calls
        self.stream = stream
        self.pacer = pacer
        self.directory = directory
        self.measure = measure
        self.max_retries = max_retries
        self.max_rate_limits = max_rate_limits
        self.label = label
        self.entries: list[MediaEntry] = []

    # ------------------------------------------------------------------ before the text

    async def plan(self, items: Iterable[Media]) -> MediaPlan:
        """Sort items into native sends and fallback lines (no platform call; file checks run in a thread)."""
        items = list(items)
        if not items:
            return MediaPlan()
        return await asyncio.to_thread(self._plan, items)

    def _plan(self, items: list[Media]) -> MediaPlan:
        plan = MediaPlan()
        limits = self.hooks.platform.media if self.hooks.implements["on_media"] else None
        name = self.hooks.platform.name
        for item in items:
            ready, why = self._fit(item, limits, name)
            entry = MediaEntry(ready)
            self.entries.append(entry)
            if why is None:
                plan.send.append(entry)
            else:
                entry.state, entry.note = "fallback", ready.fallback_line(why)
                plan.lines.append(entry.note)
        return plan

    def _fit(self, item: Media, limits: MediaLimits | None, name: str) -> tuple[Media, str | None]:
        """The item as ``on_media`` gets it, or why it cannot be sent natively (None: it can)."""
        if item.data is not None and self.directory is not None:
            item = self.directory.admit(item)             # the agent writes bytes there; a hand-made turn may not
        if item.refused:
            return item, item.refused
        if item.data is not None:
            return item, "no media directory"
        if item.path is not None and (self.directory is None or not self.directory.contains(item.path)):
            log.warning("media %r refused on %s: outside the media directory", item.filename, self.label)
            return item, "outside the media directory"
        if limits is None:
            return item, ""                               # no attachments here: the line is all there is
        if item.path is None and not limits.urls:
            return item, ""                               # a link the platform cannot pass on: show the link
        kind = item.kind
        size = item.size
        if item.path is not None and size is None:
            try:
                size = os.stat(item.path).st_size
            except OSError:
                return item, "file not found"
            item = replace(item, size=size)
        if kind not in limits.kinds or not _within(size, limits.limit_for(kind)):
            # an image too big (or not taken) as an image may still go as a file
            if "document" in limits.kinds and _within(size, limits.limit_for("document")):
                kind = "document"
            elif kind not in limits.kinds:
                return item, f"{name} cannot send {item.kind}s"
            else:
                return item, f"too large for {name}"
        caption = _cut(item.caption, limits.caption_length, self.measure)
        return replace(item, kind=kind, caption=caption), None

    # ------------------------------------------------------------------ after the text

    async def send(self, plan: MediaPlan, *, deadline: float) -> None:
        """Send each planned item once, in order; a failure for good sends its fallback line instead."""
        for entry in plan.send:
            await self._send_item(entry, deadline)
            if entry.state == "fallback":
                await self._send_line(entry, deadline)

    async def _send_item(self, entry: MediaEntry, deadline: float) -> None:
        outcome = await self._call("on_media", {"media": entry.media}, deadline, what=entry.media.filename)
        if isinstance(outcome, MessageRef):
            entry.state, entry.ref = "sent", outcome
        elif outcome == "uncertain":
            entry.state = "uncertain"
            log.info("media %r on %s may have been sent (a timeout after the upload): not sent again",
                     entry.media.filename, self.label)
        elif outcome == "deadline":
            entry.state = "gave_up"
            log.warning("media %r on %s not sent: the reply's deadline passed", entry.media.filename, self.label)
        else:
            entry.state, entry.note = "fallback", entry.media.fallback_line(outcome)

    async def _send_line(self, entry: MediaEntry, deadline: float) -> None:
        outcome = await self._call("on_stream_end", {"message": None, "text": entry.note}, deadline,
                                   what=f"the fallback line for {entry.media.filename}")
        if isinstance(outcome, MessageRef):
            entry.ref = outcome
        elif outcome != "uncertain":
            log.warning("the fallback line for media %r on %s could not be sent", entry.media.filename, self.label)

    async def _call(self, hook: str, kwargs: dict[str, Any], deadline: float, *, what: str) -> MessageRef | str:
        """One platform call made until it succeeds (:func:`.calls.call_into_chat`, the one path of calls into a
        chat): a ref, ``"uncertain"``, ``"deadline"``, or why it failed for good."""
        outcome = await call_into_chat(
            self.pacer, lambda: self.observer.call(hook, str(kwargs.get("text") or ""),
                                                   self.hooks.call(hook, stream=self.stream, **kwargs)),
            what=f"{hook} of {what!r}", label=self.label, deadline=deadline, max_retries=self.max_retries,
            max_rate_limits=self.max_rate_limits)
        if outcome.failure is not None:
            return outcome.failure
        ref = outcome.value
        if not isinstance(ref, MessageRef):
            log.warning("%s on %s returned %r, not a MessageRef", hook, self.label, ref)
            return "uncertain"  # something was sent: never again
        return ref

    # ------------------------------------------------------------------ the report

    @property
    def refs(self) -> list[MessageRef]:
        """The attachments' messages, in order (fallback lines sent on their own included)."""
        return [e.ref for e in self.entries if e.ref is not None]


def with_lines(doc: str, lines: list[str]) -> str:
    """The reply's final text with the fallback lines of media it cannot attach, after a blank line."""
    if not lines:
        return doc
    block = "\n".join(lines)
    return f"{doc}\n\n{block}" if doc else block


def _within(size: int | None, limit: int | None) -> bool:
    return limit is None or size is None or size <= limit


def _cut(caption: str, limit: int, measure: Measure) -> str:
    caption = caption.strip()
    if measure(caption) <= limit:
        return caption
    if limit <= 1:
        return ""
    return caption[:longest_prefix_within(caption, limit - 1, measure)].rstrip() + "…"
