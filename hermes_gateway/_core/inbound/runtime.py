"""``InboundRuntime``: everything between "a platform received a message" and "the agent answers it".

A plugin calls ``gateway.receive(Incoming(...))``, which returns at once
(a webhook is acknowledged before the model runs). The runtime then, the
same way on every platform:

1. answers each delivery once (:mod:`.dedupe`, by the platform's update id);
2. checks access and, in groups, that the message is meant for the bot (:mod:`.access`);
3. runs chat commands (:mod:`.commands`);
4. keeps one reply at a time per chat, with the busy policy (:mod:`.lane`);
   the files a message carries are fetched only when its turn runs
   (:mod:`..content.turn_content`), so a message dropped by any step above costs no download;
5. at shutdown stops receiving, lets running replies finish within
   ``conversation.shutdown_grace``, then stops them cleanly (what was shown
   stays, without cursor).

The turn itself (history, agent, streamed delivery, recording the turn)
is :func:`hermes_gateway._core.conversation.answer_turn`.

With several replicas (``coordination.url``), a message that passes the
local checks is admitted through the shared coordination first, in arrival
order: a redelivery another replica received is dropped there, and
``/stop``, ``/new`` or a message under ``busy: interrupt`` also stops the
chat's reply where it runs. Alone, ``receive`` stays synchronous as before.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

from ..conversation import TurnParts, answer_turn, send_text
from ..telemetry import queued, received, turn as traced_turn
from ..coordination.base import NO_TICKET, LaneKey, StopKind
from ..store import ConversationKey
from ..store.base import StoreError
from ..store.outage import report as report_store_failure
from .access import AccessPolicy
from ..operator.gate import CHECK as GATE_CHECK, Gate
from .commands import BUILTIN_COMMANDS, NOTICE, Command, CommandContext, meant_for_us, parse_command
from .dedupe import SeenUpdates
from ..messages.incoming import Incoming
from .edits import SUPERSEDED_NOTE
from .lane import ChatLane, CommandTurn, Item, RecoveryTurn, TextTurn
from .waiting import WaitingTurns

if TYPE_CHECKING:
    from ..config import Config
    from ..plugins import Plugins
    from ..recovery.recover import CutReplies

log = logging.getLogger(__name__)

#: Commands run at once beside the chat's lane: they answer the reply that runs in it (issue 25's approvals).
_BESIDE_LANE = frozenset({"allow", "deny"})

#: Seconds a cut turn gets past the delivery's own bound (recording what was shown), and again after that.
STOP_MARGIN = 0.5


class InboundRuntime:
    """The inbound side of one gateway: one per ``Gateway``, built on first use."""

    def __init__(self, parts: TurnParts, plugins: "Plugins", commands: Mapping[str, Command], *,
                 metrics: Callable[[], Any] = lambda: None, legacy_gateway: Any = None) -> None:
        """Built by the gateway (its composition root): what a turn uses (``parts``), the plugins (each
        platform's command prefix), the chat commands, and the metrics registry (``metrics()``).
        ``legacy_gateway``: only for the deprecated ``CommandContext.gateway``."""
        self.parts = parts
        self.config = parts.config
        self.plugins = plugins
        self.legacy_gateway = legacy_gateway
        conversation = parts.config.conversation
        self.busy = conversation.busy
        self.seen = SeenUpdates(conversation.dedupe_window)
        self.commands: dict[str, Command] = dict(commands)
        self.lanes: dict[tuple[str, str, str | None], ChatLane] = {}
        self.accepting = True
        self._access: dict[str, AccessPolicy] = {}
        self._saving: asyncio.Task[None] | None = None
        self.coordination = parts.coordination()
        self.coordination.on_stop = self._stopped_elsewhere
        self._admitting: list[tuple[Incoming, asyncio.Future[Any]]] = []
        self._admitter: asyncio.Task[None] | None = None
        self.gate = Gate(parts.config.operator.access, parts.store, metrics)  # users: allowed_users, admins, pairing, max_messages_per_minute (issue 23)
        self._gating: set[asyncio.Task[Any]] = set()
        self._gate_tails: dict[tuple[str, str], asyncio.Task[Any]] = {}
        self._reactor: Any = None  # status reactions (issue 24), made on first use when configured
        #: (platform, chat, message id) of messages answered again after a crash (their retry is the only one)
        self.retries: set[tuple[str, str, str | None]] = set()
        #: messages waiting in a lane, kept in the store so a crash does not lose them (alone: :mod:`.waiting`)
        self.waiting = WaitingTurns(parts.store, lambda: str(self.coordination.replica_id))

    # ---------------------------------------------------------------- receiving

    def receive(self, incoming: Incoming) -> asyncio.Future[Any]:
        """Take one message; returns at once with a future of its reply's ``DeliveryReport``.

        The future resolves to None when the message gets no reply of its own
        (a redelivery, not allowed, not addressed, dropped by ``/stop`` or
        shutdown); messages answered together share one report.
        """
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        received(future)  # telemetry: the turn's trace starts here (nothing when off)
        why_not = self._why_ignored(incoming)
        if why_not == GATE_CHECK:  # only the store knows (an unknown user under access.unknown_users: pair)
            key = (incoming.platform, incoming.sender_id or "")
            before = self._gate_tails.get(key)  # one user's messages pass the check in the order they came
            task = asyncio.get_running_loop().create_task(self._pass_gate(incoming, future, before), name="gate")
            self._gate_tails[key] = task
            self._gating.add(task)
            task.add_done_callback(self._gating.discard)
            task.add_done_callback(lambda t: self._gate_tails.pop(key, None) if self._gate_tails.get(key) is t
                                   else None)
            return future
        if why_not is not None:
            from ..groups.bots import FROM_BOT

            (log.debug if why_not.startswith(FROM_BOT) else log.info)(
                "%s: ignored a message in chat %s: %s", incoming.platform, incoming.chat_id, why_not)
            self._tell_if_slowed(incoming, why_not)
            future.set_result(None)
            return future
        self._accept(incoming, future)
        return future

    def _accept(self, incoming: Incoming, future: asyncio.Future[Any], guarded: bool = False) -> None:
        """A message that passed every check: admitted through the coordination, or straight to its lane.

        A bot's message passes the loop guard first (``groups.max_bot_turns``, counted by the coordination)."""
        if incoming.from_bot and not guarded:
            task = asyncio.get_running_loop().create_task(self._guard_bot(incoming, future), name="bot-guard")
            self._gating.add(task)
            task.add_done_callback(self._gating.discard)
            return
        if self.coordination.shared:
            self._admitting.append((incoming, future))
            if self._admitter is None or self._admitter.done():
                self._admitter = asyncio.get_running_loop().create_task(self._admit(), name="admit")
            return
        self._enqueue(incoming, future)

    async def _guard_bot(self, incoming: Incoming, future: asyncio.Future[Any]) -> None:
        """Answer a bot within the loop guard; past it, drop the message (the guard logs it once)."""
        from ..groups.bots import within_guard

        try:
            allowed = await within_guard(self.coordination, incoming, self._groups(incoming))
        except Exception as exc:  # a failing counter must not start a loop: the bot is not answered
            log.warning("%s: the bot loop guard failed in chat %s: %s: %s", incoming.platform, incoming.chat_id,
                        type(exc).__name__, exc)
            allowed = False
        if allowed and self.accepting:
            self._accept(incoming, future, guarded=True)
        elif not future.done():
            future.set_result(None)

    async def _pass_gate(self, incoming: Incoming, future: asyncio.Future[Any],
                         before: asyncio.Task[Any] | None = None) -> None:
        """The store's word on an unknown user: through, dropped, or answered with a pairing code."""
        from ..conversation import send_text

        try:
            if before is not None:
                await asyncio.wait([before])
            why_not, answer = await self.gate.check(incoming)
            if why_not is None and self.accepting:
                self._accept(incoming, future)
                return
            log.info("%s: ignored a message in chat %s: %s", incoming.platform, incoming.chat_id,
                     why_not or "the gateway is stopping")
            if why_not is not None:
                self._tell_if_slowed(incoming, why_not)
            report = await send_text(self.parts.delivery(), incoming, answer) if answer and self.accepting else None
            if not future.done():
                future.set_result(report)
        except Exception as exc:  # one message's failure is logged, never the gateway's
            log.error("%s: checking user %s failed: %s: %s", incoming.platform, incoming.sender_id,
                      type(exc).__name__, exc)
            if not future.done():
                future.set_result(None)

    def _tell_if_slowed(self, incoming: Incoming, why_not: str) -> None:
        """Over ``access.max_messages_per_minute``: one polite line a minute, sent beside the chat's lane."""
        if "max_messages_per_minute" not in why_not:
            return
        notice = self.gate.notice_due(incoming)
        if notice is None:
            return
        from ..conversation import send_text

        task = asyncio.get_running_loop().create_task(send_text(self.parts.delivery(), incoming, notice),
                                                      name="slow-down")
        self._gating.add(task)
        task.add_done_callback(self._gating.discard)

    def recover(self, record: Any, *, done: Any = None) -> asyncio.Future[Any]:
        """Queue finishing a reply a crash cut (a ``ReplyInFlight``) in its chat's lane."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if done is not None:
            future.add_done_callback(done)
        lane = self._lane_for((record.platform, record.chat_id, record.thread_id))
        lane.add_recovery(RecoveryTurn(record, future))
        self._start_lane(lane, record.platform, record.chat_id)
        return future

    def answer_again(self, record: Any) -> asyncio.Future[Any]:
        """``after_crash: retry``: answer the message of a reply a crash cut, once more, next in its chat."""
        incoming = Incoming(platform=record.platform, chat_id=record.chat_id, text=record.text,
                            message_id=record.message_id, thread_id=record.thread_id,
                            chat_kind=record.chat_kind or "private")
        self.retries.add((record.platform, record.chat_id, record.message_id))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        lane = self._lane(incoming)
        lane.items.insert(0, TextTurn([incoming], [future]))
        self._start_lane(lane, record.platform, record.chat_id)
        return future

    def _start_lane(self, lane: ChatLane, platform: str, chat_id: str) -> None:
        if lane.worker is None:
            lane.worker = asyncio.get_running_loop().create_task(lane.run(self._answer, self._forget),
                                                                 name=f"chat:{platform}:{chat_id}")

    def _enqueue(self, incoming: Incoming, future: asyncio.Future[Any], ticket: int = NO_TICKET,
                 stopped_elsewhere: bool = False) -> None:
        """Put an admitted message in its chat's lane (starting the lane's worker)."""
        if incoming.edit_of is not None:
            self._edit(incoming, future, ticket)
            return
        parsed = parse_command(incoming.text, self.command_prefix(incoming.platform))
        command = self.commands.get(parsed.name) if parsed is not None else None
        lane = self._lane(incoming)
        if not incoming.text.strip() and not incoming.attachments:  # only a notice: the fixed answer, in its place
            lane.add_command(CommandTurn(incoming, NOTICE, incoming.notice or "", future, ticket=ticket))
        elif command is not None and command.name in _BESIDE_LANE:
            assert parsed is not None  # it answers the reply running in this lane: it must not wait behind it
            self._beside_lane(CommandTurn(incoming, command, parsed.args, future, ticket=ticket))
            return
        elif command is not None:
            assert parsed is not None
            turn = CommandTurn(incoming, command, parsed.args, future, ticket=ticket)
            lane.add_command(turn)
            turn.stopped_reply = turn.stopped_reply or stopped_elsewhere
        else:
            waits = lane.running is not None or bool(lane.items)  # else it starts now (no write for it)
            lane.add_text(incoming, future, busy=self._busy_for(incoming), ticket=ticket)
            waiting = lane.items[-1] if lane.items else None
            if waits and not self.coordination.shared and isinstance(waiting, TextTurn) \
                    and incoming in waiting.messages:
                self.waiting.keep(waiting)
            queued(future)
            self._react(incoming, "received")
        self._start_lane(lane, incoming.platform, incoming.chat_id)

    def _beside_lane(self, item: CommandTurn) -> None:
        """Run a command at once, outside its chat's lane (``/allow``, ``/deny``: issue 25)."""
        async def run() -> None:
            result = await self._answer(item)
            if not item.future.done():
                item.future.set_result(result)

        task = asyncio.get_running_loop().create_task(run(), name="beside-lane")
        self._gating.add(task)
        task.add_done_callback(self._gating.discard)

    # ---------------------------------------------------------------- edits and reactions (issue 24)

    def _edit(self, incoming: Incoming, future: asyncio.Future[Any], ticket: int) -> None:
        """A person's edit (``conversation.on_edit: answer``): replace a queued message, or supersede the reply."""
        from .edits import apply_edit

        key = (incoming.platform, incoming.chat_id, incoming.thread_id)
        lane = self.lanes.get(key)
        outcome = apply_edit(lane, incoming, future, ticket) if lane is not None else None
        if outcome in (None, "unchanged") or lane is None:
            log.info("%s: ignored an edit in chat %s: message %s %s", incoming.platform, incoming.chat_id,
                     incoming.edit_of, "kept its text" if outcome else "is no longer waiting or being answered")
            future.set_result(None)
            return
        log.info("%s: message %s in chat %s was edited: %s", incoming.platform, incoming.edit_of,
                 incoming.chat_id, "its reply is superseded" if outcome == "superseded" else "replaced in the queue")
        for item in lane.items:  # the waiting turn's record says what it now answers
            if isinstance(item, TextTurn) and item.kept is not None:
                self.waiting.keep(item)
        self._start_lane(lane, incoming.platform, incoming.chat_id)

    @property
    def reactor(self) -> Any:
        """The gateway's status reactions (``reactions:``), or None when none is configured."""
        if self._reactor is None and self.config.reactions.enabled:
            from ..reactions.reactor import Reactor

            self._reactor = Reactor(self.config.reactions, self.parts.delivery())
        return self._reactor

    def _react(self, incoming: Incoming, stage: str) -> None:
        """Mark ``incoming`` for ``stage``, never ahead of the first text of a reply in its chat."""
        reactor = self.reactor
        if reactor is None:
            return
        key = (incoming.platform, incoming.chat_id, incoming.thread_id)
        reactor.mark(incoming, stage, lambda: self._first_text_pending(key))

    def _first_text_pending(self, key: tuple[str, str, str | None]) -> bool:
        """A reply in this chat is running or waiting and has not shown its first text yet."""
        lane = self.lanes.get(key)
        if lane is None:
            return False
        replying = isinstance(lane.running, TextTurn) or any(isinstance(i, TextTurn) for i in lane.items)
        return replying and not self.parts.delivery().showing_text(key[0], key[1])

    def _react_after(self, item: TextTurn, report: Any, failed: bool = False) -> None:
        """``done`` or ``failed`` on each message of a turn that ended (a stopped reply gets neither)."""
        if self.reactor is None:
            return
        if not failed and (report is None or report.interrupted):
            return
        if report is not None and (report.error or getattr(report, "model_error", None)):
            failed = True
        for message in item.messages:
            self._react(message, "failed" if failed else "done")

    async def _admit(self) -> None:
        """Admit waiting messages through the shared coordination, in arrival order, a batch per call."""
        while self._admitting:
            batch, self._admitting = self._admitting, []
            tickets = await self.coordination.admit([(m.platform, m.update_id) for m, _ in batch])
            for (incoming, future), ticket in zip(batch, tickets):
                if not ticket:
                    log.info("%s: ignored a message in chat %s: update %s was already received by another "
                             "replica", incoming.platform, incoming.chat_id, incoming.update_id)
                    if not future.done():
                        future.set_result(None)
                    continue
                stopped = False
                kind = self._stop_kind(incoming)
                if kind is not None:
                    stopped = await self.coordination.stop_elsewhere(
                        (incoming.platform, incoming.chat_id, incoming.thread_id), kind)
                self._enqueue(incoming, future, ticket, stopped)

    def _stop_kind(self, incoming: Incoming) -> StopKind | None:
        """Whether this message stops the chat's running reply, wherever it runs."""
        if incoming.edit_of is not None:  # an edit stops only the reply to the message it edits (:mod:`.edits`)
            return None
        parsed = parse_command(incoming.text, self.command_prefix(incoming.platform))
        command = self.commands.get(parsed.name) if parsed is not None else None
        if command is not None:
            return "stop" if command.stops_reply else None
        if (incoming.text.strip() or incoming.attachments) and self._busy_for(incoming) == "interrupt":
            return "interrupt"
        return None

    def _busy_for(self, incoming: Incoming) -> str:
        """``conversation.busy``, or what an ``overrides:`` entry matching this chat says (issue 23)."""
        from ..operator.overrides import for_incoming

        return for_incoming(self.config, incoming).get("busy") or self.busy

    def _stopped_elsewhere(self, key: LaneKey, kind: StopKind) -> None:
        """Another replica received ``/stop``/``/new`` (``"stop"``) or an interrupting message for a chat."""
        lane = self.lanes.get(key)
        if lane is None:
            return
        lane.cancel_running()
        if kind == "stop":
            lane.drop_queued()

    def _why_ignored(self, incoming: Incoming) -> str | None:
        if not self.accepting:
            return "the gateway is stopping"
        if not self.seen.first_time(incoming.platform, incoming.update_id):
            return f"update {incoming.update_id} was already received"
        if not self.coordination.shared:  # replicated, the shared dedupe remembers (with its own TTL)
            self._save_seen_soon()
        if incoming.edit_of is not None and self.config.conversation.on_edit == "ignore":
            return "an edit (conversation.on_edit: ignore)"
        if not incoming.text.strip() and not incoming.notice and not incoming.attachments:
            return "no text"  # files with no caption are kept: they are what the person said
        policy = self.access(incoming.platform)
        refused = policy.allows_chat(incoming)
        if refused is not None:
            return refused
        parsed = parse_command(incoming.text, self.command_prefix(incoming.platform))
        if parsed is not None and not meant_for_us(parsed, incoming):
            return f"a command for @{parsed.target}"
        if incoming.from_bot:  # other bots (issue 38): groups.bots, then the loop guard (:meth:`_accept`)
            from ..groups.bots import bot_refusal

            refused = bot_refusal(incoming, self._groups(incoming))
            if refused is not None:
                self._keep_as_context(incoming)
                return refused
        elif not policy.addressed(incoming, parsed.name if parsed else None):
            kept = self._keep_as_context(incoming)
            return "not addressed to the bot (platforms.%s.require_mention)%s" % (
                incoming.platform, "; kept as the group's context" if kept else "")
        return self.gate.screen(incoming, policy)  # allowed_users, admins, pairing, the per-user rate limit

    def _groups(self, incoming: Incoming) -> Any:
        """``groups:`` for this chat (overrides applied)."""
        from ..groups.room import settings_for

        return settings_for(self.config, incoming)

    def _keep_as_context(self, incoming: Incoming) -> bool:
        """Keep a group message the bot does not answer as the room's context (:mod:`..groups.room`), written
        beside the lanes; True when it will be (this chat keeps context and the message has something)."""
        from ..groups.room import keep, room_message

        settings = self._groups(incoming)
        if incoming.is_direct or not settings.keeps_context or room_message(incoming, settings) is None:
            return False
        async def once() -> None:  # replicated, a redelivery another replica received is known only there
            try:
                if self.coordination.shared and incoming.update_id is not None:
                    if (await self.coordination.admit([(incoming.platform, incoming.update_id)]))[0] == 0:
                        return
                await keep(self.parts.store(), incoming, settings)
            except Exception as exc:  # one message's context, never the gateway's
                log.warning("%s: keeping a message of chat %s as context failed: %s: %s", incoming.platform,
                            incoming.chat_id, type(exc).__name__, exc)

        task = asyncio.get_running_loop().create_task(once(), name="room")
        self._gating.add(task)  # (stopping waits for it, like the other work beside the lanes)
        task.add_done_callback(self._gating.discard)
        return True

    def command_prefix(self, platform: str) -> str:
        """What starts a command on ``platform`` (its ``Platform.command_prefix``; ``/`` when it declares none)."""
        try:
            return self.plugins.platform(platform).platform.command_prefix
        except KeyError:  # not a registered platform (the terminal chat)
            return "/"

    def access(self, platform: str) -> AccessPolicy:
        if platform not in self._access:
            config = self.config
            self._access[platform] = AccessPolicy.from_section(config.platforms.get(platform), source=config.source,
                                                               platform=platform)
        return self._access[platform]

    def _lane(self, incoming: Incoming) -> ChatLane:
        return self._lane_for((incoming.platform, incoming.chat_id, incoming.thread_id))

    def _lane_for(self, key: tuple[str, str, str | None]) -> ChatLane:
        lane = self.lanes.get(key)
        if lane is None:
            lane = self.lanes[key] = ChatLane(key, lease=self.coordination.lease(key), on_takeover=self._took_over,
                                              on_drop=self.waiting.dropped)
        return lane

    async def _took_over(self, lane: ChatLane) -> None:
        """This replica took the chat from one that died: finish the reply it left before anything else."""
        from ..recovery.recover import finish_cut_reply

        key = lane.key
        # the replica that had it may be alive but stalled: it stops its reply at its next renewal (a third
        # of the lease) and cuts it cleanly; finishing the reply before then would race its last edit
        await asyncio.sleep(getattr(self.coordination, "lease_ttl", 0.0) / 3 + 1.0)
        try:
            records = [r for r in await self.parts.store().replies_in_flight()
                       if (r.platform, r.chat_id, r.thread_id) == key and r.owner != self.coordination.replica_id]
            for record in records:
                await finish_cut_reply(self.cut_replies, record)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the periodic sweep tries again
            log.warning("%s: finishing the reply a dead replica left in chat %s failed: %s: %s", key[0], key[1],
                        type(exc).__name__, exc)

    def _forget(self, lane: ChatLane) -> None:
        if self.lanes.get(lane.key) is lane:
            del self.lanes[lane.key]

    async def restore(self) -> None:
        """Load the update ids a previous run saw (called once at gateway start)."""
        self.seen.restore(await self.parts.store().recent_updates(self.seen.window))

    def _save_seen_soon(self) -> None:
        """Save new update ids in one write per burst, beside the replies, never in the way of one."""
        if self._saving is None or self._saving.done():
            self._saving = asyncio.get_running_loop().create_task(self._save_seen())

    async def _save_seen(self) -> None:
        while self.seen.unsaved:
            try:
                await self.parts.store().remember_updates(self.seen.take_unsaved())
            except StoreError as exc:  # dedupe still works in memory; say so, at most once a minute
                report_store_failure(self.parts.store(), log, "received update ids not saved", exc)
                return
            except Exception as exc:  # dedupe still works in memory; say so once per burst
                log.warning("could not save received update ids: %s: %s", type(exc).__name__, exc)
                return

    # ---------------------------------------------------------------- answering

    async def _answer(self, item: Item) -> Any:
        try:
            if isinstance(item, TextTurn):
                await self.waiting.started(item)  # its record of waiting goes; the reply's own follows
                report = await traced_turn(answer_turn(
                    self.parts, item.messages, superseded=lambda: SUPERSEDED_NOTE if item.superseded else None,
                    shown=item.mark_answered), item.messages, item.futures)  # telemetry: the turn's root span
                self._react_after(item, report)
                return report
            if isinstance(item, RecoveryTurn):
                from ..recovery.recover import finish_cut_reply

                return await finish_cut_reply(self.cut_replies, item.record)
            context = CommandContext(item.incoming, item.args, self, stopped_reply=item.stopped_reply)
            text = await self._run_command(item.command, context)
            if text:
                return await send_text(self.parts.delivery(), item.incoming, text)
            return None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one chat's failure is logged, never the gateway's
            if isinstance(item, RecoveryTurn):
                log.error("%s: finishing a reply cut by a crash in chat %s failed: %s: %s", item.record.platform,
                          item.record.chat_id, type(exc).__name__, exc)
                return None
            first = item.messages[0] if isinstance(item, TextTurn) else item.incoming
            if isinstance(item, TextTurn):
                self._react_after(item, None, failed=True)
            log.error("%s: answering in chat %s failed: %s: %s", first.platform, first.chat_id,
                      type(exc).__name__, exc)
            return None

    async def _run_command(self, command: Command, context: CommandContext) -> str | None:
        """Run ``command`` if its sender may (``access.admins``, ``commands.<name>.who``); else one line."""
        from ..operator.roles import may_run, refusal

        if not may_run(self.config, context.incoming, command):
            log.info("%s: refused /%s from user %s in chat %s (admins only)", context.incoming.platform,
                     command.name, context.incoming.sender_id, context.incoming.chat_id)
            return refusal(command)
        return await command.run(context)

    async def new_conversation(self, incoming: Incoming) -> None:
        await self.parts.store().new_conversation(ConversationKey(incoming.platform, incoming.chat_id,
                                                                  incoming.thread_id))

    @property
    def cut_replies(self) -> "CutReplies":
        """What finishing a reply a crash cut uses (it runs in the chat's lane, here)."""
        from ..recovery.recover import CutReplies

        parts = self.parts
        return CutReplies(parts.config, parts.store, parts.delivery, parts.coordination, self.answer_again)

    # ---------------------------------------------------------------- stopping

    @property
    def busy_chats(self) -> int:
        """Chats with a reply running or waiting."""
        return len(self.lanes)

    async def stop(self, grace: float) -> None:
        """Stop receiving; running replies get ``grace`` seconds, then are cut, all over within a bound.

        A reply still running after ``grace`` is cut the way ``/stop`` cuts
        it (what was shown stays, without cursor), whatever it is doing: the
        delivery core sends nothing new and is done within
        ``DeliveryPolicy.cut_deadline`` (:meth:`Delivery.cut_all`), and a
        turn still not over :data:`STOP_MARGIN` later (a store that does not
        answer) is abandoned. So stopping takes at most
        ``grace + cut_deadline + 2 * STOP_MARGIN`` seconds.
        """
        try:
            await self._stop(grace)
        finally:  # reactions still waiting mark a moment that is over
            if self._reactor is not None:
                await self._reactor.close()

    async def _stop(self, grace: float) -> None:
        self.accepting = False
        loop = asyncio.get_running_loop()
        grace_ends = loop.time() + grace
        pending = {task for task in (self._admitter, self._saving, *self._gating, *self.waiting.pending)
                   if task is not None and not task.done()}
        if pending:  # admitting what arrived, saving update ids: part of the grace, not on top of it
            await asyncio.wait(pending, timeout=max(grace, STOP_MARGIN))
        workers = {lane.worker for lane in self.lanes.values() if lane.worker is not None}
        if not workers:
            return
        _, late = await asyncio.wait(workers, timeout=max(grace_ends - loop.time(), 0.0))
        if not late:
            return
        log.info("stopping %d repl%s still running after %gs", len(late), "y" if len(late) == 1 else "ies", grace)
        # messages still queued: kept as waiting (those not kept yet), told (or answered) at the next start
        self.waiting.closing = True  # dropping them below clears nothing
        for lane in self.lanes.values():
            for item in lane.items:
                if isinstance(item, TextTurn) and item.kept is None:
                    self.waiting.keep(item)
        if self.waiting.pending:
            await asyncio.wait(set(self.waiting.pending), timeout=STOP_MARGIN)
        delivery = self.parts.delivery()
        cut = delivery.policy.cut_deadline
        delivery.cut_all(cut)
        for lane in list(self.lanes.values()):
            lane.drop_queued(everything=True)
            lane.cancel_running(any_kind=True, cut=True)  # (the person is told later: crash recovery)
            if lane.running_task is None and lane.worker is not None:
                lane.worker.cancel()  # waiting for a chat another replica holds: nothing here to finish
        _, stuck = await asyncio.wait(late, timeout=cut + STOP_MARGIN)
        if stuck:
            log.warning("stopping: %d chat%s still busy %gs after the cut (the store?); abandoned", len(stuck),
                        "" if len(stuck) == 1 else "s", cut + STOP_MARGIN)
            for task in stuck:
                task.cancel()
            await asyncio.wait(stuck, timeout=STOP_MARGIN)


def run_in_lane(runtime: InboundRuntime, platform: str, chat_id: str, thread_id: str | None,
                job: Callable[[], Awaitable[Any]]) -> "asyncio.Future[Any]":
    """Run ``job`` in the chat's lane, as a turn of its own: after the reply being written, before the next.

    What the gateway says unasked (a schedule's occurrence, a reminder, issue 24) then never streams
    into a chat beside a reply, and with replicas it waits for the chat's lease like any turn. The
    future completes with what ``job`` returned (None if it failed; the failure is logged).
    """
    incoming = Incoming(platform, str(chat_id), "", thread_id=thread_id)
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    outcome: list[Any] = []

    async def run(context: CommandContext) -> None:
        outcome.append(await job())
        return None

    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def finished(_: asyncio.Future[Any]) -> None:
        if not done.done():
            done.set_result(outcome[0] if outcome else None)

    future.add_done_callback(finished)
    lane = runtime._lane(incoming)
    lane.add_command(CommandTurn(incoming, Command("unasked", "what the gateway says unasked", run), "", future))
    if lane.worker is None:
        lane.worker = asyncio.get_running_loop().create_task(lane.run(runtime._answer, runtime._forget),
                                                             name=f"chat:{platform}:{chat_id}")
    return done


def collect_commands(plugins: "Plugins", config: "Config | None" = None) -> dict[str, Command]:
    """The built-in commands, then those plugins register for ``config`` (a plugin cannot replace a built-in;
    the built-in reminders plugin adds /reminders and /cancel when ``tools.reminders`` is on).

    The built-ins are the core's own, present whatever plugins are loaded:
    ``/stop`` must work on every platform.
    """
    from .approval_commands import APPROVAL_COMMANDS  # /allow ID, /deny ID (issue 25)
    from ..groups.commands import FORGET  # /forget: a group's kept context (issue 38)
    from ..operator.commands import operator_commands  # /model, /persona, /whoami ... (issue 23)

    commands = {command.name: command for command in (*BUILTIN_COMMANDS, *operator_commands(),
                                                      *APPROVAL_COMMANDS, FORGET)}
    for command, impl in plugins.collect("register_commands", Command, "command", config):
        if command.name in commands:
            log.warning("plugin %s: command /%s is already defined; ignored", impl.plugin_name, command.name)
            continue
        commands[command.name] = command
    return commands
