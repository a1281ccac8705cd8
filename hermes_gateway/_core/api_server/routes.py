"""The OpenAI-compatible endpoints and the bookkeeping around each request.

One :class:`ApiServer` per gateway. Every handler goes through
:meth:`ApiServer._endpoint`, which checks the key, turns :class:`ApiError`
into OpenAI's error shape, turns anything unexpected into a 500 in the same
shape (the traceback goes to the log, never to the client), and counts the
request. Streams are registered while open so shutdown can end them
properly and ``/metrics`` can show how many are live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import Any, Awaitable, Callable, Protocol, Sequence

from aiohttp import web
from prometheus_client.exposition import choose_encoder

from ..approvals.chat import Approver
from ..approvals.local import api_approver
from ..config import Config
from ..events import TurnEnd, UsageReport
from ..http.cors import Cors
from ..http.disconnect import cancel_on_disconnect
from ..http.errors import SERVER_ERROR, ApiError, echo
from ..http.guards import RequestGuard
from ..media import Media
from ..reasoning import split_reasoning
from ..telemetry import note_model
from .access_log import FIRST_TOKEN_AT
from .auth import check_authorization
from .chat_stream import ChatChunks, write_chat_stream
from .audio_parts import has_audio, hear_audio_parts, hear_content, passes_audio_through
from .media import ROUTE as MEDIA_ROUTE, MediaLinks, RenderedMedia, link_base, render_media
from .metrics import Metrics
from .outcome import classify_end, refusal_error, total_usage
from .progress import FIELD as PROGRESS_FIELD, HEADER as PROGRESS_HEADER, wants_progress
from .replies import PLATFORM, chat_message, input_items_page, record_key
from .responses_stream import ResponseShape, final_status, write_responses_stream
from .sse import SSEWriter
from ..store.base import ConversationKey, StoreError
from .store import ResponseStore, StoredResponse, owner_fingerprint
from ..agent.options import NO_OPTIONS
from .validation import TurnInput, model_ids, parse_chat_request, parse_responses_request, read_json_body

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Which configured key authenticated this request (RequestKey exists in aiohttp >= 3.12 only).
KEY_INDEX: Any = web.RequestKey("hermes_api_key_index", object) if hasattr(web, "RequestKey") else "hermes_api_key"


class Agent(Protocol):
    """The part of ``hermes_gateway._core.agent.AIAgent`` the API server uses."""

    def astream(self, message: Any, history: list[dict] | None = ..., options: Any = ...,
                approver: Approver | None = ...) -> Any:
        """One turn's events; ``options``: the request's ``TurnOptions`` (model parameters, client tools);
        ``approver``: asked before a tool that needs approval runs."""

    def interrupt(self) -> None: ...


AgentFactory = Callable[[], Agent]


class ActiveTurn:
    """A turn in flight, so shutdown can interrupt it and wait for its stream to end.

    The event shutdown waits on is made only when shutdown asks (one per request cost more than the rest
    of this bookkeeping).
    """

    __slots__ = ("agent", "task", "ended", "_done")

    def __init__(self, agent: Agent, task: asyncio.Task[Any] | None) -> None:
        self.agent = agent
        self.task = task
        self.ended = False
        self._done: asyncio.Event | None = None

    def finish(self) -> None:
        self.ended = True
        if self._done is not None:
            self._done.set()

    async def wait(self) -> None:
        """Until :meth:`finish` was called."""
        if self.ended:
            return
        if self._done is None:
            self._done = asyncio.Event()
        await self._done.wait()


def default_agent_factory(config: Config) -> AgentFactory:
    """One ``AIAgent`` for every request (imported lazily: the server starts even if the agent is broken)."""
    agent: Agent | None = None

    def shared() -> Agent:
        nonlocal agent
        if agent is None:
            from ..agent import AIAgent

            agent = AIAgent.from_config(config)
        return agent
    return shared


class ApiServer:
    """Handlers, auth, metrics and the response store of the OpenAI-compatible API."""

    def __init__(self, config: Config, *, agent_factory: AgentFactory | None = None,
                 store: ResponseStore | None = None, metrics: Metrics | None = None) -> None:
        self.config = config
        self.cfg = config.api_server
        self.agent_factory = agent_factory or default_agent_factory(config)
        self.keys = tuple(k.encode("utf-8", "surrogatepass") for k in self.cfg.api_keys)
        self.owners = tuple(owner_fingerprint(k) for k in self.cfg.api_keys)  # who owns a stored response
        self.models = model_ids(config)  # api_server.model_name, then the configured models' names
        self.vision = config.model.vision  # image parts accepted (model.vision)
        self.extra_params = frozenset(self.cfg.extra_params)  # vendor fields passed to the upstream
        self.ping_interval = self.cfg.keepalive_interval
        # A stream's status and first frames wait this long for the agent's first event (an upstream refusal is
        # then answered with its own status): until the keep-alive's first ping would be due.
        self.hold = self.ping_interval or DEFAULT_HOLD
        self.cors = Cors(self.cfg.cors_origins)
        self.guard = RequestGuard(self.cfg, self.cors)
        self.metrics = metrics if metrics is not None else Metrics()  # the gateway's registry, or one of its own
        self.store = store or ResponseStore(history_messages=config.store.history_messages,
                                            history_chars=config.store.history_chars)
        self.media = MediaLinks(config.media)  # /v1/media/{token}: the short-lived links to a reply's files
        self.active: set[ActiveTurn] = set()
        self.closing = False
        self.started_at = int(time.time())

    # -- wiring ---------------------------------------------------------------------------------------------

    def add_routes(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/v1/chat/completions", self._endpoint("chat_completions", self.chat_completions))
        r.add_post("/v1/responses", self._endpoint("responses", self.responses))
        r.add_get("/v1/responses/{response_id}", self._endpoint("responses_get", self.get_response))
        r.add_get("/v1/responses/{response_id}/input_items", self._endpoint("responses_input_items",
                                                                           self.get_input_items))
        r.add_delete("/v1/responses/{response_id}", self._endpoint("responses_delete", self.delete_response))
        r.add_get("/v1/models", self._endpoint("models", self.list_models))
        r.add_get("/v1/models/{model}", self._endpoint("models_get", self.get_model))
        r.add_get(MEDIA_ROUTE, self._endpoint("media", self.media.serve, auth=False))  # the token is the key
        r.add_route("*", "/v1/{tail:.*}", self._endpoint("unknown", self.unknown))
        r.add_get("/health", self._endpoint("health", self.health, auth=False))
        r.add_get("/metrics", self._endpoint("metrics", self.prometheus, auth=False))
        if self.cors.enabled:
            app.on_response_prepare.append(self._add_cors_headers)

    async def _add_cors_headers(self, request: web.Request, response: web.StreamResponse) -> None:
        if request.path.startswith("/v1/"):
            self.cors.decorate(request, response)

    def _endpoint(self, route: str, handler: Handler, *, auth: bool = True) -> Handler:
        @cancel_on_disconnect  # a client that goes away cancels its turn and the upstream request
        async def endpoint(request: web.Request) -> web.StreamResponse:
            status = 500
            response: web.StreamResponse
            try:
                if request.method == "OPTIONS" and self.cors.enabled:
                    response = self.cors.preflight(request)  # browsers send no key on a preflight
                    status = response.status
                    return response
                self.guard.check(request)
                if auth:
                    request[KEY_INDEX] = check_authorization(request.headers.get("Authorization"), self.keys)
                response = await handler(request)
                status = response.status
                return response
            except ApiError as exc:
                status = exc.status
                self.metrics.error(f"http_{exc.status}")
                return exc.response()
            except asyncio.CancelledError:
                status = 499  # the client closed the connection (nginx's convention)
                raise
            except Exception:
                log.exception("%s %s failed", request.method, request.path)
                self.metrics.error("http_500")
                return ApiError(500, "The gateway failed to handle this request (see the gateway's log).",
                                type=SERVER_ERROR, code="internal_error").response()
            finally:
                self.metrics.request(route, status)
        return endpoint

    # -- simple endpoints ------------------------------------------------------------------------------------

    async def list_models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self._model(m) for m in self.models]})

    async def get_model(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        if name not in self.models:
            raise ApiError(404, f"The model '{echo(name)}' does not exist.", param="model", code="model_not_found")
        return web.json_response(self._model(name))

    def _model(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": self.started_at, "owned_by": "hermes-gateway"}

    async def health(self, request: web.Request) -> web.Response:
        if self.closing:
            return web.json_response({"status": "shutting_down"}, status=503)
        return web.json_response({"status": "ok", "active_streams": self.metrics.active_streams})

    async def prometheus(self, request: web.Request) -> web.Response:
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))  # Prometheus text or OpenMetrics
        return web.Response(body=encoder(self.metrics.registry),
                            headers={"Content-Type": content_type, "Cache-Control": "no-cache"})

    async def unknown(self, request: web.Request) -> web.Response:
        known = {"/v1/chat/completions": "POST", "/v1/responses": "POST", "/v1/models": "GET"}
        if request.path in known:
            raise ApiError(405, f"{request.method} is not allowed on {request.path}; use {known[request.path]}.",
                           code="method_not_allowed", headers={"Allow": known[request.path]})
        raise ApiError(404, f"Unknown endpoint {request.method} {echo(request.path, 200)}.", code="unknown_url")

    async def get_response(self, request: web.Request) -> web.Response:
        try:
            item = await self.store.get(request.match_info["response_id"], self._owner(request))
        except StoreError as exc:
            raise _store_unavailable(exc) from None
        if item is None:
            raise self._no_response(request.match_info["response_id"])
        return web.json_response(_public(item.response))

    async def get_input_items(self, request: web.Request) -> web.Response:
        """``GET /v1/responses/{id}/input_items``: the items the request that made the response sent."""
        response_id = request.match_info["response_id"]
        try:
            item = await self.store.get(response_id, self._owner(request))
        except StoreError as exc:
            raise _store_unavailable(exc) from None
        if item is None:
            raise self._no_response(response_id)
        return web.json_response(input_items_page(item.response.get(INPUT_ITEMS) or [], request.query))

    async def delete_response(self, request: web.Request) -> web.Response:
        response_id = request.match_info["response_id"]
        try:
            deleted = await self.store.delete(response_id, self._owner(request))
        except StoreError as exc:
            raise _store_unavailable(exc) from None
        if not deleted:
            raise self._no_response(response_id)
        return web.json_response({"id": response_id, "object": "response", "deleted": True})

    def _owner(self, request: web.Request) -> str | None:
        """The fingerprint of the key that authenticated ``request`` (None when the server has no keys)."""
        index = request.get(KEY_INDEX)
        return None if index is None else self.owners[index]

    async def _hear_audio(self, turn: Any, where: str) -> None:
        """Chat Completions ``input_audio`` parts become their transcripts, unless the upstream hears audio."""
        if passes_audio_through(self.config):
            return
        if turn.message is not None and has_audio(turn.message) or any(has_audio(m.get("content"))
                                                                       for m in turn.history):
            await hear_audio_parts(turn.history, self.config, where)
            turn.message = await hear_content(turn.message, self.config, where, len(turn.history))

    def _no_response(self, response_id: str) -> ApiError:
        return ApiError(404, f"No response with id '{echo(response_id)}' (it was not stored, or was evicted).",
                        param="response_id", code="response_not_found")

    # -- the two model endpoints -----------------------------------------------------------------------------

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        started = asyncio.get_running_loop().time()
        body = await read_json_body(request, self.cfg.max_body_bytes)
        agent = self.agent_factory()
        turn = parse_chat_request(body, models=self.models, vision=self.vision, gateway_tools=self.cfg.gateway_tools,
                                  extra_params=self.extra_params)
        note_model(turn.model)  # telemetry: the request's span names its model
        await self._hear_audio(turn, "messages")
        progress = self.cfg.tool_progress_events if PROGRESS_FIELD not in body and PROGRESS_HEADER not in \
            request.headers else wants_progress(body, request.headers, self.cfg.tool_progress_events)
        self._refuse_while_closing()
        if turn.stream:
            self._refuse_over_stream_cap()
        chunks = ChatChunks(f"chatcmpl-{random_hex_id()}", turn.model)
        verbatim = turn.options is not NO_OPTIONS and turn.options.structured
        if not turn.stream:
            end, usage = await self._run_to_end(agent, turn)
            reasoning = split_reasoning(end.raw, starts_open=_starts_open(agent))[0] \
                if self.cfg.expose_reasoning and not verbatim else ""
            media = await self._render_media(request, end.media)
            text = end.raw if verbatim else end.reply
            message = chat_message(text + media.tail(text), end.tool_calls, reasoning)
            if turn.record:
                await self._record_chat(turn, end, text, self._owner(request))
            return web.json_response({
                "id": chunks.completion_id, "object": "chat.completion", "created": chunks.created,
                "model": turn.model,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": end.finish_reason}],
                "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                          "total_tokens": usage.total_tokens},
            })

        async def relay(sse: SSEWriter, active: ActiveTurn) -> None:
            events = agent.astream(turn.message, history=turn.history, options=turn.options,
                                   approver=api_approver(self.config))
            outcome = await write_chat_stream(sse, events, chunks,
                                    include_usage=turn.include_usage, tool_progress=progress,
                                    starts_open=_starts_open(agent), expose_reasoning=self.cfg.expose_reasoning,
                                    on_text=self._text_counter(started, request), shutting_down=lambda: self.closing,
                                    render_media=lambda items: self._render_media(request, items),
                                    verbatim=verbatim, client_tools=turn.options.client_tool_names,
                                    hold=self.hold)
            if outcome.ok and outcome.end is not None:
                if turn.record:
                    await self._record_chat(turn, outcome.end, outcome.text, self._owner(request))
            else:
                self.metrics.error(outcome.error_code or "internal_error")
        return await self._stream(request, agent, relay)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        started = asyncio.get_running_loop().time()
        body = await read_json_body(request, self.cfg.max_body_bytes)
        owner = self._owner(request)
        earlier_id = body.get("previous_response_id")
        earlier = await self._stored(earlier_id, owner)
        agent = self.agent_factory()
        turn = parse_responses_request(body, models=self.models, gateway_tools=self.cfg.gateway_tools,
                                       extra_params=self.extra_params,
                                       vision=self.vision, conversation_of=lambda response_id: None if earlier is None
                                       else list(earlier.conversation))
        note_model(turn.model)
        progress = self.cfg.tool_progress_events if PROGRESS_FIELD not in body and PROGRESS_HEADER not in \
            request.headers else wants_progress(body, request.headers, self.cfg.tool_progress_events)
        self._refuse_while_closing()
        if turn.stream:
            self._refuse_over_stream_cap()
        shape = ResponseShape(f"resp_{random_hex_id()}", f"msg_{random_hex_id()}", turn.model,
                              instructions=turn.instructions, previous_response_id=turn.previous_response_id,
                              store=turn.store, options=turn.options)
        # the conversation-store key: the chain's, else one a client resending the whole input keeps hitting
        chain = (earlier.response.get(CHAIN) or turn.previous_response_id) if earlier is not None \
            else record_key(turn.history, turn.message, owner).chat_id
        verbatim = turn.options is not NO_OPTIONS and turn.options.structured
        if not turn.stream:
            end, usage = await self._run_to_end(agent, turn)
            media = await self._render_media(request, end.media)
            reply = end.raw if verbatim else end.reply
            text = reply + media.tail(reply)
            items = [shape.function_call(call) for call in end.tool_calls]
            if text or not items:
                items.insert(0, shape.message("completed", text, media.annotations(text)))
            final = shape.response(final_status(end), [*items, *media.images], usage=usage)
            await self._remember(turn, shape, final, end, owner, reply, chain=chain)
            return web.json_response(final)

        async def relay(sse: SSEWriter, active: ActiveTurn) -> None:
            outcome, final = await write_responses_stream(
                sse, agent.astream(turn.message, history=turn.history, options=turn.options,
                                   approver=api_approver(self.config)), shape,
                tool_progress=progress, on_text=self._text_counter(started, request),
                shutting_down=lambda: self.closing, starts_open=_starts_open(agent),
                render_media=lambda items: self._render_media(request, items), verbatim=verbatim, hold=self.hold)
            if outcome.ok:
                await self._remember(turn, shape, final, outcome.end, owner, outcome.text, chain=chain)
            else:
                self.metrics.error(outcome.error_code or "internal_error")
        return await self._stream(request, agent, relay)

    # -- helpers ---------------------------------------------------------------------------------------------

    async def _render_media(self, request: web.Request, items: Sequence[Media]) -> RenderedMedia:
        """The turn's media as links this client can fetch: on ``media.public_url`` (a TLS-terminating proxy in
        front), else on this server's address as the client reached it."""
        return await render_media(items, self.media, link_base(request, self.config.media.public_url))

    def _refuse_while_closing(self) -> None:
        if self.closing:
            raise ApiError(503, "The gateway is shutting down; retry shortly.", type=SERVER_ERROR,
                           code="server_shutdown", headers={"Retry-After": "5"})

    def _refuse_over_stream_cap(self) -> None:
        """429 beyond ``api_server.max_concurrent_streams``: overload degrades predictably, with a retry hint."""
        cap = self.cfg.max_concurrent_streams
        if self.metrics.active_streams >= cap:
            raise ApiError(429, f"The gateway is serving its maximum of {cap} concurrent streams "
                                "(api_server.max_concurrent_streams); retry shortly.", type=SERVER_ERROR,
                           code="too_many_streams", headers={"Retry-After": "1"})

    async def _stored(self, response_id: Any, owner: str | None) -> StoredResponse | None:
        """The stored response ``previous_response_id`` continues (read before validation, which is sync)."""
        if not isinstance(response_id, str) or not response_id:
            return None  # absent or malformed: validation says so
        try:
            return await self.store.get(response_id, owner)
        except StoreError as exc:
            raise _store_unavailable(exc) from None

    async def _remember(self, turn: TurnInput, shape: ResponseShape, final: dict[str, Any], end: TurnEnd | None,
                        owner: str | None, reply: str | None = None, *, chain: str | None = None) -> None:
        """Store the response and its conversation: what came before, then the turn as the agent recorded it
        (the user message, tool calls and results, the reply), and the turn in the conversation store under
        the chain's key (``hermes-gateway history`` lists it). The reply already went out: a
        store that fails costs a warning in the log, not the reply."""
        if not turn.store:
            return
        this_turn = _this_turn(turn, end, reply)
        kept = {**final, INPUT_ITEMS: turn.input_items, CHAIN: chain or shape.response_id}
        try:
            await self.store.put(shape.response_id, kept, [*turn.conversation, *this_turn], owner)
            await self.store.backend.record_turn(ConversationKey(PLATFORM, chain or shape.response_id),
                                                 _with_input(turn, this_turn))
        except StoreError as exc:
            log.warning("response %s was not stored: %s", shape.response_id, exc)

    async def _record_chat(self, turn: TurnInput, end: TurnEnd, reply: str, owner: str | None) -> None:
        """A Chat Completions turn with ``store: true``, kept in the conversation store under the
        conversation's first message (a client resending the growing conversation adds to the same one)."""
        if not turn.record:
            return
        try:
            await self.store.backend.record_turn(record_key(turn.history, turn.message, owner),
                                                 _with_input(turn, _this_turn(turn, end, reply)))
        except StoreError as exc:
            log.warning("a chat completion was not recorded: %s", exc)

    def _text_counter(self, started: float, request: web.Request) -> Callable[[int], None]:
        """Counts text events for /metrics and records time to first token on the first one."""
        metrics = self.metrics
        first = True

        def on_text(n: int) -> None:
            nonlocal first
            metrics.deltas += n
            if first:
                first = False
                now = asyncio.get_running_loop().time()
                metrics.ttft.observe(now - started)
                request[FIRST_TOKEN_AT] = now
        return on_text

    async def _run_to_end(self, agent: Agent, turn: TurnInput) -> tuple[TurnEnd, UsageReport]:
        """A non-streaming turn: the whole reply, or a 5xx in OpenAI's shape."""
        active = self._track(agent)
        reports: list[UsageReport] = []
        end: TurnEnd | None = None
        try:
            events = agent.astream(turn.message, history=turn.history, options=turn.options,
                                   approver=api_approver(self.config))
            async with contextlib.aclosing(events) as events:
                async for event in events:
                    if isinstance(event, TurnEnd):
                        end = event
                        break
                    if isinstance(event, UsageReport):
                        reports.append(event)
        except asyncio.CancelledError:
            self.metrics.error("client_disconnect")
            raise
        except Exception:
            log.exception("the agent failed")
            end = None
        finally:
            self._untrack(active)
        code, message = classify_end(end, self.closing)
        if code is not None or end is None:
            self.metrics.error(code or "internal_error")
            refused = refusal_error(end)
            if refused is not None:
                raise refused
            status = 503 if code == "server_shutdown" else 502
            raise ApiError(status, message or "", type=SERVER_ERROR, code=code)
        return end, total_usage(reports, end)

    async def _stream(self, request: web.Request, agent: Agent,
                      relay: Callable[[SSEWriter, ActiveTurn], Awaitable[None]]) -> web.StreamResponse:
        """Open the SSE response, run ``relay``, and always leave the books balanced."""
        sse = SSEWriter(request, self.ping_interval)
        active = self._track(agent)
        self.metrics.active_streams += 1
        try:
            await relay(sse, active)  # the writer opens the response at the agent's first event (coalesce.Frames)
            await sse.close()
        except ApiError:  # the upstream refused before anything was sent: a plain error answer (its status)
            raise
        except asyncio.CancelledError:
            self.metrics.error("client_disconnect")
            raise
        except ConnectionError:
            self.metrics.error("client_disconnect")  # noticed on a write rather than by cancellation
        except Exception:
            log.exception("stream %s failed", request.path)
            self.metrics.error("internal_error")
        finally:
            await sse.stop_keepalive()
            self.metrics.active_streams -= 1
            self._untrack(active)
        return sse.response

    def _track(self, agent: Agent) -> ActiveTurn:
        active = ActiveTurn(agent, asyncio.current_task())
        self.active.add(active)
        return active

    def _untrack(self, active: ActiveTurn) -> None:
        self.active.discard(active)
        active.finish()

    async def shutdown(self, grace: float) -> None:
        """Refuse new turns, interrupt the running ones, and give their streams ``grace`` s to end properly.

        An interrupted turn ends with ``TurnEnd(interrupted=True)``; the writers
        turn that into an error event and ``[DONE]``/``response.failed``, so no
        client sees a frame cut in half. Turns that ignore the interrupt are
        cancelled after ``grace``.
        """
        self.closing = True
        turns = list(self.active)
        for turn in turns:
            with contextlib.suppress(Exception):
                turn.agent.interrupt()
        if not turns:
            return
        waits = [asyncio.ensure_future(t.wait()) for t in turns]
        _, pending = await asyncio.wait(waits, timeout=grace)
        for w in pending:
            w.cancel()
        for turn in turns:
            if not turn.ended and turn.task is not None:
                log.warning("a turn ignored the interrupt for %.1fs; cancelling it", grace)
                turn.task.cancel()


#: The hold (seconds) when keep-alive pings are off (``api_server.keepalive_interval: 0``).
DEFAULT_HOLD = 15.0

#: Kept beside a stored Response object, never shown with it: the request's input items and the chain's first id.
INPUT_ITEMS = "_hermes_input_items"
CHAIN = "_hermes_chain"


def _public(response: dict[str, Any]) -> dict[str, Any]:
    """A stored Response object without the gateway's own bookkeeping."""
    return {k: v for k, v in response.items() if k not in (INPUT_ITEMS, CHAIN)}


def random_hex_id() -> str:
    """``uuid.uuid4().hex`` (the same 122 random bits, version and variant bits), without building a ``UUID``."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 4122 variant
    return raw.hex()


def _this_turn(turn: TurnInput, end: TurnEnd | None, reply: str | None) -> list[dict[str, Any]]:
    """The turn's messages as the agent recorded them, the last assistant text as the client received it."""
    seen = reply if reply is not None else (end.reply if end is not None else "")
    this_turn = [dict(m) for m in (end.messages if end is not None else ())]
    if not this_turn and turn.message is not None:
        this_turn = [{"role": "user", "content": turn.message}]
    if this_turn and this_turn[-1].get("role") == "assistant" and not this_turn[-1].get("tool_calls"):
        this_turn[-1]["content"] = seen  # exactly the text the client received
    elif not (this_turn and (this_turn[-1].get("tool_calls") or end is not None and end.tool_calls)):
        # (a turn that ends with the client's calls may end with the results of the gateway's calls of the
        # same answer: the client's results follow them)
        this_turn.append({"role": "assistant", "content": seen})
    return this_turn


def _with_input(turn: TurnInput, this_turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For the conversation store: a turn that continues from the client's tool results starts with them."""
    if turn.message is not None:
        return this_turn
    results: list[dict[str, Any]] = []
    for message in reversed(turn.history):
        if message.get("role") != "tool":
            break
        results.insert(0, message)
    return [*results, *this_turn]


def _store_unavailable(exc: StoreError) -> ApiError:
    log.warning("the response store failed: %s", exc)
    return ApiError(503, "The gateway's response store is unavailable; see the gateway's log.", type=SERVER_ERROR,
                    code="store_unavailable", headers={"Retry-After": "5"})


def _starts_open(agent: Agent) -> bool:
    """``model.reasoning_starts_open`` of the agent's model (replies open inside reasoning)."""
    return bool(getattr(agent, "reasoning_starts_open", False))
