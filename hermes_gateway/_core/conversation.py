"""One turn of a conversation in a chat: history in, the agent's events streamed out, the turn recorded.

This is where an inbound message becomes a delivered reply. History comes
from the gateway's :class:`~hermes_gateway._core.store.ConversationStore`, so a
conversation survives a restart, and the turn is recorded there whatever
happens: answered, interrupted (what was shown is what the model is told
it said), or failed (nothing recorded: the person was told to try again).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

from .config import Config
from .delivery import Delivery, DeliveryReport, StreamSession, deliver_events
from .events import TurnEnd
from .inbound.incoming import Incoming
from .inbound.lane import cut_here
from .store import ConversationKey, StoreError

from .store.outage import report as report_store_failure

if TYPE_CHECKING:
    from .recovery.journal import InFlightJournal

log = logging.getLogger(__name__)

#: What a chat shows when the model failed before saying anything.
FAILURE_NOTICE = "⚠️ Sorry, I could not get an answer from the model just now. Please try again in a moment."


@dataclass
class TurnProgress:
    """What a running turn has got to, readable when the turn is stopped half-way."""

    session: StreamSession | None = None
    end: TurnEnd | None = None


async def reply_in_chat(config: Config, delivery: Delivery, platform: str, chat_id: str, text: str, *,
                        history: Sequence[dict[str, Any]] | None = None, thread_id: str | None = None,
                        chat_kind: str | None = None, reply_to: str | None = None,
                        agent: Any = None, progress: TurnProgress | None = None,
                        on_shown: Any = None) -> tuple[DeliveryReport, TurnEnd | None]:
    """Run one agent turn for ``text`` and deliver it into the chat."""
    from .agent import AIAgent  # the agent pulls in the openai SDK: import it when a turn runs

    owned = agent is None  # an agent made for this one turn is closed after it (its connection pool)
    agent = agent or AIAgent.from_config(config)
    progress = progress or TurnProgress()

    async def events():
        async for event in agent.astream(text, history=list(history or [])):
            if isinstance(event, TurnEnd):
                progress.end = event
                if event.error and not event.reply.strip() and not event.interrupted:
                    # the person must not be left with silence; the details go to the log, not the chat
                    event = replace(event, reply=FAILURE_NOTICE)
            yield event

    session = delivery.session(platform, chat_id, thread_id=thread_id, chat_kind=chat_kind, reply_to=reply_to,
                               on_shown=on_shown)
    progress.session = session
    try:
        report = await deliver_events(events(), session)
    finally:
        if owned:
            await agent.aclose()
    end = progress.end
    if end is not None and end.error and not report.text:
        report.error = report.error or end.error
    return report, end


async def answer_turn(gateway: Any, messages: Sequence[Incoming]) -> DeliveryReport:
    """Answer one or more messages of one chat in one turn (the inbound runtime's worker calls this).

    Cancelling the task that runs it stops the reply: the report then says
    ``interrupted`` and is returned, not raised, since a stop is an ordinary
    end of a turn.
    """
    last = messages[-1]
    text = "\n\n".join(m.text for m in messages)
    key = ConversationKey(last.platform, last.chat_id, last.thread_id)
    store = gateway.store
    try:
        history = await store.history(key)
    except StoreError as exc:  # the database went away: the person is still answered, without the history
        report_store_failure(store, log, "history not read", exc)
        history = []
    progress = TurnProgress()
    journal = _journal(gateway, messages, text)
    try:
        report, end = await reply_in_chat(gateway.config, gateway.delivery, last.platform, last.chat_id, text,
                                          history=history, thread_id=last.thread_id, chat_kind=last.chat_kind,
                                          reply_to=last.message_id, agent=gateway.agent, progress=progress,
                                          on_shown=journal.shown if journal is not None else None)
    except asyncio.CancelledError:
        # stopped (/stop, a message under the interrupt policy, shutdown): the reply keeps what was shown,
        # and the conversation remembers that much of it; the stop is this turn's normal end
        report = DeliveryReport(interrupted=True)
        if progress.session is not None:
            report = await asyncio.shield(progress.session.interrupt())
        if journal is not None:
            await journal.settle()
        if journal is not None and not journal.failed and cut_here():
            # cut by shutdown or a lost lease, not by the person: they have not been told, and nobody will answer
            # here; the record stays for crash recovery (the next start, or the replica that has the chat once
            # it is free), which adds the note (or answers again) and records the turn
            pass
        else:
            await asyncio.shield(_record(store, key, _interrupted_turn(text, report.text), journal))
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return report
    except Exception:
        if journal is not None:
            await journal.end()
        raise
    await _unstoppable(_bookkeeping(store, key, text, report, end, journal))
    return report


async def _bookkeeping(store: Any, key: ConversationKey, text: str, report: DeliveryReport, end: TurnEnd | None,
                       journal: "InFlightJournal | None") -> None:
    """After the final reply: record the turn and clear its reply in flight."""
    if journal is not None:
        await journal.settle()
    if end is not None and not (end.error and not end.reply):
        turn = end.messages if not end.interrupted else _interrupted_turn(text, report.text)
        await _record(store, key, turn, journal)
    elif journal is not None:
        await journal.end()


async def _unstoppable(work: Any) -> None:
    """Run ``work`` to its end even if this task is cancelled meanwhile (a stop arriving after the reply was
    final must not leave the turn unrecorded, nor its reply in flight for crash recovery to note)."""
    task = asyncio.ensure_future(work)
    while True:
        try:
            await asyncio.shield(task)
            return
        except asyncio.CancelledError:
            if task.done():
                return
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()


def _journal(gateway: Any, messages: Sequence[Incoming], text: str) -> "InFlightJournal | None":
    """Record the reply as in flight (crash recovery), unless this gateway cannot say who it is."""
    from uuid import uuid4

    from .recovery.journal import InFlightJournal
    from .store.base import ReplyInFlight

    owner = getattr(getattr(gateway, "coordination", None), "replica_id", None)
    if owner is None:
        return None
    last = messages[-1]
    retries = getattr(getattr(gateway, "_inbound", None), "retries", set())
    attempt = 0
    for m in messages:
        if (m.platform, m.chat_id, m.message_id) in retries:
            retries.discard((m.platform, m.chat_id, m.message_id))
            attempt = 1
    reply = ReplyInFlight(uuid4().hex, last.platform, last.chat_id, last.thread_id, last.chat_kind, last.message_id,
                          text, owner, attempt=attempt)
    return InFlightJournal(gateway.store, reply)


async def _record(store: Any, key: ConversationKey, turn: list[dict[str, Any]], journal: Any = None) -> None:
    """Record the turn (clearing its reply in flight in the same write); a store that fails costs a log line
    (the reply already went out), not the turn's report."""
    try:
        if journal is not None:
            await store.record_turn(key, turn, in_flight=journal.id)
        else:
            await store.record_turn(key, turn)
    except StoreError as exc:
        report_store_failure(store, log, "turn not recorded", exc)


def _interrupted_turn(text: str, shown: str) -> list[dict[str, Any]]:
    turn: list[dict[str, Any]] = [{"role": "user", "content": text}]
    if shown:
        turn.append({"role": "assistant", "content": shown})
    return turn


async def send_text(gateway: Any, incoming: Incoming, text: str) -> DeliveryReport:
    """A short answer of the core's own (a command's), delivered like any reply: budget, 429s, split."""
    session = gateway.delivery.session(incoming.platform, incoming.chat_id, thread_id=incoming.thread_id,
                                       chat_kind=incoming.chat_kind, reply_to=incoming.message_id)
    return await session.finish(text)
