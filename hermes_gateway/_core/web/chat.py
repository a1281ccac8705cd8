"""The web chat: a platform of its own (``web``), its replies pushed to the browser over SSE.

A message typed in the browser becomes an ``Incoming("web", chat, text)``
handed to the gateway's inbound runtime — the same path a Telegram message
takes: dedupe, access, commands (``/new``, ``/stop``, ``/help`` ...), one
reply at a time per chat, the agent, the delivery core, the store (listed
by ``hermes-gateway history`` as platform ``web``). The delivery core then
calls this platform's client like any other (``on_delta`` with the whole
visible text of a message, ``on_stream_end`` with its final text,
``on_media`` with a tool's file), and the client turns each call into one
event on the chat's :class:`~.feed.ChatFeed`, which the browser reads as
``text/event-stream``. Nothing here runs a model. This module holds the
routes; :mod:`.chat_client` the platform and its client; :mod:`.feed` the
events.

The platform declares no real rate limit (a browser has none) and a short
``edit_interval`` (``streaming.web`` defaults: on, 0.05 s, from the first
token), so text arrives token by token; the Stop button sends ``/stop``,
which cuts the reply the way every platform's interrupt does.

A tool waiting for approval asks with buttons (the client's ``offer_choice``;
a press comes back to :func:`choose`), and files come in through
:func:`upload` (:mod:`.uploads`) as the message's ``Incoming.attachments``.

One chat per browser session: the chat id is the session's
(:attr:`.auth.WebSession.chat_id`), so no browser can read or write
another's conversation, nor fetch another's files. Every route here is open
to a user signed in with an API key as well as to the operator
(:func:`.auth.user_session`): each acts on the session's own chat only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

from aiohttp import web

from ..messages.choice import ChoiceAnswer
from ..store.base import ConversationKey
from .auth import session_of, user_csrf, user_session
from .chat_client import PLATFORM, WebChatClient
from .history_view import inside, user_view
from .responses import PING, PING_EVERY, SECURITY_HEADERS, json_error, json_ok, open_event_stream, read_json
from ..console_sources import ConsoleSources
from .uploads import QueueBound, read_upload

log = logging.getLogger(__name__)

#: Longest message the browser may send, in characters, and its JSON body in bytes.
MAX_TEXT = 32_000
SEND_BODY_LIMIT = 4 * MAX_TEXT + 1024
#: History entries sent to a page that opens (the rest stays in the store).
HISTORY_LIMIT = 200
#: A button press's JSON body: one short payload.
CHOOSE_BODY_LIMIT = 1024


#: What the console's chat uses of its gateway (its store, its config, the web platform's running client).
SOURCES_KEY = web.AppKey("hermes_gateway._core.web.sources", ConsoleSources)


def client_of(request: web.Request) -> WebChatClient | None:
    sources = request.app.get(SOURCES_KEY)
    client = sources.client(PLATFORM) if sources is not None else None
    return client if isinstance(client, WebChatClient) else None


def _unavailable() -> web.Response:
    return json_error(503, "the web chat is not running (platforms.web is disabled, or the gateway is stopping)",
                      "unavailable")


@user_csrf
async def send(request: web.Request) -> web.StreamResponse:
    """``POST /ui/api/chat/send`` ``{"text": ...}``: 202 at once; the reply arrives on the feed."""
    client = client_of(request)
    if client is None or not client.context.accepting:
        return _unavailable()
    body = await read_json(request, SEND_BODY_LIMIT)
    if isinstance(body, web.Response):
        return body
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        return json_error(400, "send {\"text\": \"your message\"}", "bad_text")
    if len(text) > MAX_TEXT:
        return json_error(413, f"a message is at most {MAX_TEXT} characters", "too_long")
    if "\x00" in text:
        return json_error(400, "the text contains a NUL character", "bad_text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800"): JSON allows it, UTF-8 (the store, the feed) does not
        return json_error(400, "the text is not valid Unicode (a lone surrogate)", "bad_text")
    session = session_of(request)
    client.send(session.chat_id, text.strip(), sender=session.chat_id)
    return json_ok({"accepted": True}, status=202)


@user_csrf
async def upload(request: web.Request) -> web.StreamResponse:
    """``POST /ui/api/chat/upload`` (multipart: ``text``, ``file``...): the message with its files, 202 at once.

    Each file becomes an ``Attachment`` as on every platform (:mod:`.uploads`), spooled to disk until its turn;
    beyond ``media.inbound_max_bytes`` the upload is a 413, beyond the chat's queue
    (``media.upload_queue_files``/``upload_queue_bytes``) a 429, and nothing is sent."""
    client = client_of(request)
    if client is None or not client.context.accepting:
        return _unavailable()
    media = request.app[SOURCES_KEY].config.media
    session = session_of(request)
    bound = QueueBound(client.uploads, session.chat_id, media.upload_queue_files, media.upload_queue_bytes)
    got = await read_upload(request, media.inbound_max_bytes, MAX_TEXT, media.path(), bound)
    if isinstance(got, web.Response):
        return got
    if not got.attachments and not got.text:
        got.discard()
        return json_error(400, "send a file (a form field named file) or some text", "empty")
    try:
        turn = client.send(session.chat_id, got.text, sender=session.chat_id, attachments=tuple(got.attachments))
    except BaseException:
        got.discard()
        raise
    turn.add_done_callback(lambda _: got.discard())  # answered, dropped or stopped: the spool and count go
    return json_ok({"accepted": True, "files": got.shown}, status=202)


@user_csrf
async def choose(request: web.Request) -> web.StreamResponse:
    """``POST /ui/api/chat/choose`` ``{"payload": ...}``: a button of a question in this chat was pressed.

    Answered through ``context.choose`` like a Telegram button; the line it returns (approved, denied,
    no longer open) is for the presser: ``{"line": ...}``."""
    client = client_of(request)
    if client is None:
        return _unavailable()
    body = await read_json(request, CHOOSE_BODY_LIMIT)
    if isinstance(body, web.Response):
        return body
    session = session_of(request)
    payload = body.get("payload")
    answer = ChoiceAnswer.from_payload(PLATFORM, session.chat_id, session.chat_id, payload) \
        if isinstance(payload, str) else None
    if answer is None:
        return json_error(400, "send {\"payload\": \"the button's payload\"}", "bad_payload")
    try:
        line = await client.context.choose(answer)
    except Exception as exc:  # e.g. the coordination layer is unreachable: the press did not count
        log.warning("web chat: a button press could not be answered: %s: %s", type(exc).__name__, exc)
        return json_error(503, "the answer could not be taken now; press again", "unavailable")
    return json_ok({"line": line})


@user_csrf
async def stop(request: web.Request) -> web.StreamResponse:
    """``POST /ui/api/chat/stop``: ``/stop`` into the chat — the reply is cut, what was shown stays."""
    client = client_of(request)
    if client is None:
        return _unavailable()
    session = session_of(request)
    client.send(session.chat_id, "/stop", sender=session.chat_id)
    return json_ok({"stopping": True}, status=202)


@user_session
async def history(request: web.Request) -> web.StreamResponse:
    """The chat's stored conversation (user and assistant text), for a page that opens or reloads."""
    sources = request.app[SOURCES_KEY]
    session = session_of(request)
    messages: list[dict[str, Any]] = []
    try:
        stored = await sources.store().history(ConversationKey(PLATFORM, session.chat_id))
    except Exception as exc:  # a store problem costs the backlog, not the page
        log.warning("web chat: the history could not be read: %s", exc)
        stored = []
    client = client_of(request)
    media = sources.config.media.path()

    def serve(path: str, mime: str, name: str) -> str | None:
        if client is None or not inside(path, media):
            return None
        return client.serve_file(session.chat_id, path, mime, name)

    for item in stored[-HISTORY_LIMIT:]:
        role, content = item.get("role"), item.get("content")
        if role == "user":
            text, files = user_view(content, serve)
            if text or files:
                messages.append({"role": role, "text": text, **({"files": files} if files else {})})
            continue
        if role != "assistant":
            continue
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        if isinstance(content, str) and content:
            messages.append({"role": role, "text": content})
    busy = client is not None and session.chat_id in client.feeds and client.feeds[session.chat_id].busy
    return json_ok({"messages": messages, "busy": busy})


@user_session
async def events(request: web.Request) -> web.StreamResponse:
    """``GET /ui/api/chat/events``: the chat's feed as SSE (resumes after ``Last-Event-ID``)."""
    client = client_of(request)
    if client is None:
        return _unavailable()
    session = session_of(request)
    feed = client.feed(session.chat_id)
    resumed = request.headers.get("Last-Event-ID", "")
    try:
        last = int(resumed or (feed.next_id - 1))
    except ValueError:
        last = feed.next_id - 1
    response = await open_event_stream(request, retry_ms=1000)
    if not resumed:  # a page that opens: the questions still waiting for a press (no id: the cursor stays)
        questions = client.open_questions(session.chat_id)
        if questions:
            await response.write("".join(f"data: {json.dumps(q)}\n\n" for q in questions).encode())
    closed = asyncio.ensure_future(client.closed.wait())
    try:
        while not client.closed.is_set():
            changed = feed.changed
            pending = feed.after(last)
            if pending:
                await response.write("".join(f"id: {e.id}\ndata: {e.data}\n\n" for e in pending).encode())
                last = pending[-1].id
                continue
            waiter = asyncio.ensure_future(changed.wait())
            done, _ = await asyncio.wait({waiter, closed}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                waiter.cancel()
                await response.write(PING)
            elif waiter not in done:
                waiter.cancel()
            feed = client.feed(session.chat_id)  # the same feed, unless it was evicted meanwhile
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        closed.cancel()
    return response


@user_session
async def file(request: web.Request) -> web.StreamResponse:
    """A tool's file, only to the session whose chat it was sent into."""
    client = client_of(request)
    served = client.files.get(request.match_info["token"]) if client is not None else None
    if served is None or served.chat_id != session_of(request).chat_id:
        return json_error(404, "no such file", "not_found")
    if not os.path.isfile(served.path):
        return json_error(404, "the file is gone (media.keep_days)", "gone")
    safe_name = "".join(c for c in served.filename if c.isalnum() or c in "._- ")[:100] or "file"
    disposition = "inline" if served.mime.startswith("image/") else "attachment"
    return web.FileResponse(served.path, headers={
        **SECURITY_HEADERS, "Content-Type": served.mime, "Cache-Control": "private, max-age=3600",
        "Content-Disposition": f'{disposition}; filename="{safe_name}"'})


def add_routes(app: web.Application, sources: ConsoleSources) -> None:
    app[SOURCES_KEY] = sources
    app.router.add_post("/ui/api/chat/send", send)
    app.router.add_post("/ui/api/chat/stop", stop)
    app.router.add_post("/ui/api/chat/upload", upload)
    app.router.add_post("/ui/api/chat/choose", choose)
    app.router.add_get("/ui/api/chat/history", history)
    app.router.add_get("/ui/api/chat/events", events, allow_head=False)  # a HEAD gets no stream
    app.router.add_get("/ui/api/chat/files/{token}", file)
