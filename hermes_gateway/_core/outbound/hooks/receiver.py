"""Hooks from outside: what answers ``POST /hooks/NAME`` on the gateway's listener.

Mounted by the built-in plugin :mod:`...builtin.hooks_from_outside` (like the
API server and the web console) when ``hooks:`` lists some. What a call goes
through, in this order, so that nothing a stranger sends is parsed, stored
or costs a turn before it is known to come from the hook's owner:

1. the hook by name (404) and the method (405: POST only);
2. the credentials that need no body (:func:`.verify.check_before_body`: the
   bearer token, or that a signature and a fresh timestamp are there): 401;
3. the body, read within ``max_bytes`` (413, the rest unread) and a deadline (408);
4. the signature of the body (401), then the JSON, when the prompt reads
   ``{json...}`` fields (400: not JSON);
5. the hook's token bucket (``per_minute``, ``burst``): 429 with ``Retry-After``;
6. the delivery id (``X-GitHub-Delivery`` or ``Idempotency-Key``): one seen
   before, here, in the store (across restarts) or, with ``coordination.url``,
   by any replica, is answered 200 ``duplicate`` without a turn;
7. ``202`` with an id, at once; the turn runs after, in the chat's lane, like
   a schedule's prompt (:func:`..deliver.run_prompt`), and is recorded in the
   chat's history.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from functools import partial
from typing import Any, Callable

from aiohttp import web

from ...conversation import TurnParts
from ...delivery.budget import ChatBudget
from ...http.errors import AUTHENTICATION, NOT_FOUND, ApiError, bad_request, echo
from ...errors import StartError
from ...inbound.dedupe import SeenUpdates
from ...platform import RateBudget
from ...settings.hooks import HookSettings
from ...store import StoreError
from ...store.outage import report as report_store_failure
from ..deliver import run_prompt
from .body import read_bounded
from .template import render
from .verify import Refused, check_before_body, check_signature

log = logging.getLogger(__name__)

#: Where the hooks are served: ``/hooks/NAME``.
PREFIX = "/hooks/"
#: The headers a sender names its delivery with (a redelivery repeats it), the first one present counts.
DELIVERY_HEADERS = ("X-GitHub-Delivery", "Idempotency-Key")
#: The longest delivery id kept (GitHub's are UUIDs).
MAX_DELIVERY_ID = 200
#: How the store and the shared dedupe tell a hook's deliveries from a platform's update ids.
DEDUPE_PREFIX = "hook:"


class Hooks:
    """The configured hooks of one gateway: their buckets, the deliveries seen, the route's handler."""

    def __init__(self, parts: TurnParts, spawn: Callable[..., None], accepting: Callable[[], bool], *,
                 clock: Callable[[], float] = time.time) -> None:
        """``parts``: what a turn uses; ``spawn(platform, chat, thread, job, what)`` runs the hook's turn in the
        chat's lane (the scheduler's, so a stop gives it the shutdown grace); ``accepting()``: False while the
        gateway stops."""
        self.parts = parts
        self._spawn = spawn
        self._accepting = accepting
        self.clock = clock
        self.by_name: dict[str, HookSettings] = {hook.name: hook for hook in parts.config.hooks}
        self.buckets = {hook.name: ChatBudget(RateBudget(rate=hook.per_minute / 60.0, burst=hook.burst),
                                              updated=time.monotonic()) for hook in parts.config.hooks}
        self.seen = SeenUpdates(parts.config.conversation.dedupe_window)

    def check(self, platforms: list[str]) -> None:
        """Refuse to start with a hook whose chat is on a platform that is not enabled (one line)."""
        for i, hook in enumerate(self.parts.config.hooks):
            if hook.platform not in platforms:
                running = ", ".join(platforms) or "none"
                raise StartError(f"hooks[{i}].chat: {hook.platform} is not an enabled platform (enabled: {running}); "
                                 f"hook {hook.name} could never be answered")

    async def restore(self) -> None:
        """The delivery ids a previous run took (the store keeps them with the platforms' update ids)."""
        try:
            recent = await self.parts.store().recent_updates(self.seen.window * 4)
        except StoreError as exc:
            report_store_failure(self.parts.store(), log, "hook delivery ids not read", exc)
            return
        self.seen.restore([key for key in recent if key[0].startswith(DEDUPE_PREFIX)])

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The route's handler: every refusal in OpenAI's error shape; never an exception (the handler is
        shielded from a sender's hang-up, so one raised after it would only be logged as never retrieved)."""
        try:
            return await self._handle(request)
        except ApiError as exc:
            response = exc.response()
            if exc.headers.get("Connection") == "close":  # a body left unread: answer now, never read the rest
                try:
                    await response.prepare(request)
                    await response.write_eof()
                except (ConnectionError, RuntimeError):
                    pass  # the sender is gone already
                request.protocol.force_close()
            return response

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info.get("name", "")
        hook = self.by_name.get(name)
        if hook is None:
            raise ApiError(404, f"No hook is named {echo(name)!r} (hooks[].name).", type=NOT_FOUND,
                           code="unknown_hook")
        if request.method != "POST":
            raise ApiError(405, f"{request.method} is not allowed on {PREFIX}{name}; use POST.",
                           code="method_not_allowed", headers={"Allow": "POST"})
        if not self._accepting():
            raise ApiError(503, "The gateway is stopping; deliver again shortly.", type="server_error",
                           code="stopping", headers={"Retry-After": "5"})
        try:
            check_before_body(hook.verify, hook.secret, request.headers, self.clock())
            body = await read_bounded(request, hook.max_bytes)
            check_signature(hook.verify, hook.secret, request.headers, body)
        except Refused as exc:
            log.info("hook %s: refused a call from %s: %s", name, request.remote, exc)
            raise ApiError(401, str(exc), type=AUTHENTICATION, code="invalid_signature",
                           headers={"Connection": "close"} if not request.content.at_eof() else None) from None
        delivery = self._delivery_id(request)
        data = self._json(hook, body)
        self._take_token(hook)
        accepted = f"hook_{uuid.uuid4().hex}"
        if not await self._first_time(hook, delivery):
            log.info("hook %s: delivery %s was already taken; no turn", name, delivery)
            return web.json_response({"id": accepted, "object": "hook.delivery", "hook": name,
                                      "status": "duplicate"}, status=200)
        prompt = render(hook.prompt, body, data)
        self._spawn(hook.platform, hook.chat, hook.thread,
                    partial(run_prompt, self.parts, hook.platform, hook.chat, hook.thread, prompt, record=True),
                    f"hook {name} ({accepted})")
        log.info("hook %s: accepted %s (%d bytes)", name, accepted, len(body))
        return web.json_response({"id": accepted, "object": "hook.delivery", "hook": name, "status": "accepted"},
                                 status=202)

    @staticmethod
    def _delivery_id(request: web.Request) -> str | None:
        for header in DELIVERY_HEADERS:
            value = request.headers.get(header, "").strip()
            if value:
                if len(value) > MAX_DELIVERY_ID:
                    raise bad_request(f"'{header}' is longer than {MAX_DELIVERY_ID} characters.", param=header,
                                      code="invalid_delivery_id")
                return value
        return None

    @staticmethod
    def _json(hook: HookSettings, body: bytes) -> Any:
        """The parsed body when the prompt reads ``{json...}`` (a 400 when it is not JSON), else None."""
        if not hook.needs_json:
            return None
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise bad_request(f"Hook {hook.name}'s prompt reads fields of a JSON body, and this body is not JSON.",
                              code="invalid_json") from None

    def _take_token(self, hook: HookSettings) -> None:
        bucket = self.buckets[hook.name]
        now = time.monotonic()
        ready = bucket.ready_at(now)
        if ready > now:
            wait = max(1, int(ready - now + 0.999))
            raise ApiError(429, f"Hook {hook.name} takes at most {hook.per_minute:g} calls a minute "
                                f"(hooks[].per_minute); retry in {wait} s.", type="rate_limit_error",
                           code="rate_limited", headers={"Retry-After": str(wait)})
        bucket.take(now)

    async def _first_time(self, hook: HookSettings, delivery: str | None) -> bool:
        """Whether ``delivery`` was taken nowhere before (here, in the store, by another replica); records it."""
        if delivery is None:
            return True
        key = DEDUPE_PREFIX + hook.name
        if not self.seen.first_time(key, delivery):
            return False
        coordination = self.parts.coordination()
        if coordination.shared and not (await coordination.admit([(key, delivery)]))[0]:
            return False
        try:
            await self.parts.store().remember_updates(self.seen.take_unsaved())  # before the 202: a restart knows it
        except StoreError as exc:
            report_store_failure(self.parts.store(), log, "hook delivery id not saved", exc)
        return True
