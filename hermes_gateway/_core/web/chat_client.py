"""The ``web`` platform and its running client: the delivery core's calls become feed events.

The delivery core calls this client like any platform's (``on_delta`` with
the whole visible text of a message, ``on_stream_end`` with its final text,
``on_media`` with a tool's file); each call becomes one event on the chat's
:class:`~.feed.ChatFeed`. A message the person types goes the other way,
into the inbound runtime (:meth:`WebChatClient.send`). Nothing here runs a
model. Files from tools are kept servable to the chat they were sent into.
A question with buttons (``offer_choice``) is a ``choice`` event, kept while
it waits so a page that opens shows it again; ``close_choice`` replaces it
with its outcome. Tool progress (``on_tool_progress``) is a ``note`` event.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..messages.choice import Choice
from ..messages.attachments import Attachment
from ..messages.incoming import Incoming
from ..media import Media, MediaLimits
from ..platform import MessageRef, Platform, RateBudget, Stream
from ..platform_context import PlatformClient, PlatformContext
from .feed import ChatFeed
from .uploads import UploadQueue

PLATFORM = "web"
#: Chats with a live feed kept at once (the least recently used beyond it is forgotten).
MAX_FEEDS = 5_000
#: Files from tools kept servable at once (the oldest link stops working beyond it).
MAX_FILES = 2_000
#: A finished tool's result summary is cut to this many characters on its progress line (as the terminal's).
TOOL_SUMMARY = 160


@dataclass(frozen=True)
class ServedFile:
    chat_id: str
    path: str
    mime: str
    filename: str


class WebChatClient(PlatformClient):
    """The ``web`` platform's running client: delivery's calls become feed events."""

    def __init__(self, settings: Any, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self.feeds: OrderedDict[str, ChatFeed] = OrderedDict()
        self.files: OrderedDict[str, ServedFile] = OrderedDict()
        self.questions: dict[str, dict[str, dict[str, Any]]] = {}  # chat -> message id -> its open choice event
        self._ids = 0
        self.closed = asyncio.Event()
        self.uploads = UploadQueue()  # per chat: files uploaded and not yet answered (media.upload_queue_*)

    def feed(self, chat_id: str) -> ChatFeed:
        feed = self.feeds.get(chat_id)
        if feed is None:
            feed = self.feeds[chat_id] = ChatFeed()
            while len(self.feeds) > MAX_FEEDS:
                self.feeds.popitem(last=False)
        self.feeds.move_to_end(chat_id)
        return feed

    def _message_id(self) -> str:
        self._ids += 1
        return f"m{self._ids}"

    # -- the stream methods (called by the delivery core) -----------------------------------------

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_stream_start(self, stream: Stream) -> None:
        self.feed(stream.chat_id).publish({"type": "typing"})

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        ref = message or MessageRef(stream.chat_id, self._message_id())
        self.feed(stream.chat_id).publish({"type": "text", "id": ref.message_id, "text": text, "final": False})
        return ref

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        ref = message or MessageRef(stream.chat_id, self._message_id())
        self.feed(stream.chat_id).publish({"type": "text", "id": ref.message_id, "text": text, "final": True})
        return ref

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file: kept servable behind this chat's session, shown inline (images) or as a link."""
        ref = MessageRef(stream.chat_id, self._message_id())
        if media.path is None:  # the core hands over files only (urls=False); anything else is its fallback line
            self.feed(stream.chat_id).publish({"type": "text", "id": ref.message_id, "text": media.fallback_line(),
                                               "final": True})
            return ref
        url = self.serve_file(stream.chat_id, media.path, media.mime or "application/octet-stream",
                              media.filename or "file")
        self.feed(stream.chat_id).publish({
            "type": "media", "id": ref.message_id, "url": url,
            "kind": str(media.kind or "document"), "filename": media.filename, "caption": media.caption,
            "mime": media.mime})
        return ref

    def serve_file(self, chat_id: str, path: str, mime: str, filename: str) -> str:
        """A URL serving the file at ``path`` to ``chat_id``'s session only (the oldest link beyond
        :data:`MAX_FILES` stops working)."""
        token = secrets.token_urlsafe(16)
        self.files[token] = ServedFile(chat_id, path, mime, filename)
        while len(self.files) > MAX_FILES:
            self.files.popitem(last=False)
        return f"/ui/api/chat/files/{token}"

    async def offer_choice(self, stream: Stream, choice: Choice) -> MessageRef:
        """The question with one button per option; a press comes back as ``POST /ui/api/chat/choose``
        with the button's payload (:func:`.chat.choose`), answered through ``context.choose``."""
        ref = MessageRef(stream.chat_id, self._message_id())
        event = {"type": "choice", "id": ref.message_id, "text": choice.prompt,
                 "options": [{"label": o.label, "style": o.style, "payload": choice.payload(o)}
                             for o in choice.options]}
        self.questions.setdefault(stream.chat_id, {})[ref.message_id] = event
        self.feed(stream.chat_id).publish(event)
        return ref

    async def close_choice(self, stream: Stream, ref: MessageRef, text: str) -> None:
        """The question's message now reads ``text``: its buttons are gone (a final text event of its id)."""
        open_here = self.questions.get(stream.chat_id, {})
        open_here.pop(ref.message_id, None)
        if not open_here:
            self.questions.pop(stream.chat_id, None)
        self.feed(stream.chat_id).publish({"type": "text", "id": ref.message_id, "text": text, "final": True})

    def open_questions(self, chat_id: str) -> list[dict[str, Any]]:
        """The chat's questions still waiting for a press: a page that opens (or reloads) shows them again."""
        return list(self.questions.get(chat_id, {}).values())

    async def on_tool_progress(self, stream: Stream, name: str, *, done: bool, ok: bool = True,
                               summary: str = "") -> None:
        """A tool's progress as the terminal shows it: ``🔧 calling NAME``, then ``✓ NAME: summary``."""
        if not done:
            line = f"🔧 calling {name}"
        else:
            short = " ".join(summary.split())
            short = short if len(short) <= TOOL_SUMMARY else short[:TOOL_SUMMARY - 1] + "…"
            line = f"{'✓' if ok else '✗'} {name}" + (f": {short}" if short else "")
        self.feed(stream.chat_id).publish({"type": "note", "text": line})

    async def close(self) -> None:
        self.closed.set()

    # -- what the browser does ---------------------------------------------------------------------

    def send(self, chat_id: str, text: str, sender: str,
             attachments: tuple[Attachment, ...] = ()) -> asyncio.Future[Any]:
        """The person's message (and files), into the inbound runtime; the feed says when the chat is busy and
        idle again."""
        feed = self.feed(chat_id)
        update = secrets.token_hex(8)
        future = self.context.receive(Incoming(PLATFORM, chat_id, text, sender_id=sender, update_id=update,
                                               message_id=update, chat_kind="private",
                                               attachments=attachments))
        if text.strip().lower() != "/stop":
            feed.pending += 1
            feed.publish({"type": "busy"})

            def done(_: asyncio.Future[Any]) -> None:
                feed.pending -= 1
                if not feed.busy:  # a command answered beside a running reply (/allow) leaves it busy
                    feed.publish({"type": "idle"})

            future.add_done_callback(done)
        return future


def make_platform() -> Platform:
    """The ``web`` platform: no real rate limit, long messages, every kind of file (served behind the session)."""
    return Platform(
        PLATFORM, max_message_length=32_000, edit_interval=0.0,
        budgets={"default": RateBudget(rate=200.0, burst=200)},
        media=MediaLimits(max_bytes={"default": 100_000_000}, caption_length=1024),
        description="the browser chat of the web console (/ui)", client=WebChatClient)


WEB_PLATFORM = make_platform()
