"""The dashboard's routes under ``/ui``: its page, the state as JSON and as SSE, a stored chat, pairing decisions.

Every route is the operator's (:func:`.auth.require_session`: a user signed
in with an API key gets 403), and the two POSTs behind its CSRF check
(:func:`.auth.require_csrf`) — but one: a stored chat is open to a user too,
for the chats that are theirs (their web chat, their key's API
conversations: :func:`.auth.may_read`); any other is 404 to them, as if it
did not exist:

* ``GET /ui/dashboard`` — the page (``static/dashboard.html`` and ``dashboard.js``);
* ``GET /ui/api/state`` — the snapshot (:mod:`.dashboard_state`);
* ``GET /ui/api/state/events`` — the snapshot again whenever it changes, as SSE
  (:mod:`.dashboard_feed`: at most two a second, a ``: ping`` comment every
  :data:`~.responses.PING_EVERY` seconds, 429 past the connection cap, over at shutdown);
* ``GET /ui/api/chats/{platform}/{chat}`` (``?thread=``) — the chat's current stored conversation, read-only;
* ``POST /ui/api/pairing/approve`` and ``/reject`` — ``{"platform", "user_id"}`` (:mod:`.dashboard_pairing`).

Malformed input gets a 4xx JSON error, never a 5xx.
"""

from __future__ import annotations

import json

from aiohttp import web

from ..store import ConversationKey
from .auth import may_read, require_csrf, require_session, session_of, user_session
from .dashboard_feed import DashboardFeed
from .dashboard_messages import conversation_view
from .dashboard_pairing import MAX_ID, PairingRefused, checked_ids, decide
from .dashboard_state import LastMessages, snapshot
from .pages import add_page
from .responses import PING, PING_EVERY, json_error, json_ok, open_event_stream, read_json
from .sources import ConsoleSources

#: A pairing decision's body holds two ids.
DECISION_BODY_LIMIT = 2 * MAX_ID + 256

FEED_KEY = web.AppKey("hermes_gateway._core.web.dashboard.feed", DashboardFeed)
DASHBOARD_SOURCES_KEY = web.AppKey("hermes_gateway._core.web.dashboard.sources", ConsoleSources)


def add_routes(app: web.Application, sources: ConsoleSources) -> None:
    """Mount the dashboard on the console's ``app``; its live feed closes when the listener shuts down."""
    seen = LastMessages()
    feed = app[FEED_KEY] = DashboardFeed(lambda: snapshot(sources, last=seen))
    app[DASHBOARD_SOURCES_KEY] = sources

    async def close_feed(_: web.Application) -> None:
        await feed.close()

    app.on_shutdown.append(close_feed)
    add_page(app, "/ui/dashboard", "dashboard.html")
    app.router.add_get("/ui/api/state", state)
    app.router.add_get("/ui/api/state/events", state_events, allow_head=False)  # a HEAD gets no stream
    app.router.add_get("/ui/api/chats/{platform}/{chat}", chat)
    app.router.add_post("/ui/api/pairing/approve", approve)
    app.router.add_post("/ui/api/pairing/reject", reject)


def _sources(request: web.Request) -> ConsoleSources:
    return request.app[DASHBOARD_SOURCES_KEY]


@require_session
async def state(request: web.Request) -> web.StreamResponse:
    return json_ok(await snapshot(_sources(request)))


@require_session
async def state_events(request: web.Request) -> web.StreamResponse:
    """The snapshot as SSE (``event: state``), sent again on each change; pings keep an idle stream open."""
    feed = request.app[FEED_KEY]
    if not feed.join():
        return json_error(429, "too many open dashboards; close one and reload", "too_many_streams",
                          headers={"Retry-After": "5"})
    try:
        response = await open_event_stream(request, retry_ms=2000)
        seen = 0
        while not feed.closed.is_set():
            if feed.version > seen and feed.latest is not None:
                seen = feed.version
                data = json.dumps(feed.latest, ensure_ascii=False, separators=(",", ":"))
                await response.write(f"id: {seen}\nevent: state\ndata: {data}\n\n".encode())
                continue
            if not await feed.wait(seen, PING_EVERY) and not feed.closed.is_set():
                await response.write(PING)
        await response.write_eof()
    except ConnectionResetError:  # the browser went away
        pass
    finally:
        feed.leave()
    return response


@user_session
async def chat(request: web.Request) -> web.StreamResponse:
    """The current stored conversation of one chat (404 when it has none, or it is not the user's)."""
    platform, chat_id = request.match_info["platform"], request.match_info["chat"]
    thread = request.query.get("thread") or None
    if any(len(v) > MAX_ID for v in (platform, chat_id, thread or "")):
        return json_error(400, f"platform, chat and thread are at most {MAX_ID} characters", "too_long")
    store = _sources(request).store()
    mine = may_read(session_of(request), platform, chat_id, thread)
    summary = await store.current(ConversationKey(platform, chat_id, thread)) if mine else None
    messages = await store.conversation(summary.id) if summary is not None else None
    if summary is None or messages is None:
        return json_error(404, f"no stored conversation for {platform}:{chat_id}", "not_found")
    return json_ok({"id": summary.id, "platform": platform, "chat_id": chat_id, "thread_id": thread,
                    "turns": summary.turns, "created": summary.created, "last_activity": summary.last_activity,
                    "messages": conversation_view(messages)})


@require_csrf
async def approve(request: web.Request) -> web.StreamResponse:
    return await _decide(request, approve=True)


@require_csrf
async def reject(request: web.Request) -> web.StreamResponse:
    return await _decide(request, approve=False)


async def _decide(request: web.Request, *, approve: bool) -> web.StreamResponse:
    body = await read_json(request, DECISION_BODY_LIMIT)
    if isinstance(body, web.Response):
        return body
    try:
        platform, user = checked_ids(body)
        by = f"operator (web console, signed in by {session_of(request).via})"
        result = await decide(_sources(request).store(), platform, user, approve, by=by)
    except PairingRefused as exc:
        return json_error(exc.status, str(exc), "pairing")
    return json_ok(result)
