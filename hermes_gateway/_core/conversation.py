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
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from .config import Config
from .delivery import Delivery, DeliveryReport, StreamSession, deliver_events
from .events import StreamReset, TextDelta, TurnEnd
from .content.file_content import MediaSettings
from .content.history_media import history_for_model
from .messages.incoming import Incoming
from .content.turn_content import plain_text, turn_content, with_stored_user
from .voice.pipeline import VOICE_KINDS, register as register_voice
from .voice.reply import follow_with_voice_note
from .voice.speech import sends_audio, wants_voice_reply
from .cuts import cut_here
from .store import ConversationKey, StoreError
from .store.outage import report as report_store_failure

if TYPE_CHECKING:
    from .approvals.answers import Approvals
    from .coordination import Coordination
    from .operator.turns import ProfileAgents
    from .recovery.journal import InFlightJournal
    from .store import ConversationStore

log = logging.getLogger(__name__)
register_voice()  # voice notes and audio files: transcribed by the media pipeline's converter for their kind

#: What a chat shows when the model failed before saying anything.
FAILURE_NOTICE = "⚠️ Sorry, I could not get an answer from the model just now. Please try again in a moment."


#: What a turn's ``prepare`` step gives: the user content, the history for the model, the reply's preface.
#: Content None: the message had nothing the model could answer (no words, no usable file); the preface is the
#: reply, no model turn runs and nothing is recorded.
Prepared = tuple[str | list[dict[str, Any]] | None, Sequence[dict[str, Any]], str]


@dataclass(frozen=True)
class TurnParts:
    """What a chat turn uses, each part typed, built once by the gateway (its composition root) and handed to
    what runs turns: the inbound runtime, schedules and reminders, hooks from outside.

    The store, delivery core, coordination and agents are providers: the
    gateway opens them on first use and again after a restart.
    ``client(platform)`` is the platform's running client (its buttons), or
    None; ``wake_scheduler()`` tells schedules a reminder was added;
    ``retries()`` names the messages being answered again after a crash.
    """

    config: Config
    store: Callable[[], "ConversationStore"]
    delivery: Callable[[], Delivery]
    coordination: Callable[[], "Coordination"]
    agents: Callable[[], "ProfileAgents"]
    approvals: Callable[[], "Approvals"]
    client: Callable[[str], Any]
    wake_scheduler: Callable[[], None]
    retries: Callable[[], set[tuple[str, str, "str | None"]]]


@dataclass
class TurnProgress:
    """What a running turn has got to, readable when the turn is stopped half-way."""

    session: StreamSession | None = None
    end: TurnEnd | None = None
    interrupt_note: Callable[[], str | None] | None = None  # the line a stopped reply ends with (an edit)


async def reply_in_chat(config: Config, delivery: Delivery, platform: str, chat_id: str,
                        text: str | list[dict[str, Any]], *,
                        history: Sequence[dict[str, Any]] | None = None, thread_id: str | None = None,
                        chat_kind: str | None = None, reply_to: str | None = None,
                        agent: Any = None, progress: TurnProgress | None = None,
                        settings: Any = None, footer: Any = None,
                        prepare: Callable[[], Awaitable[Prepared]] | None = None, journal: Any = None,
                        approver: Any = None,
                        ) -> tuple[DeliveryReport, TurnEnd | None]:
    """Run one agent turn for ``text`` (or content parts) and deliver it into the chat.

    ``settings``: this chat's streaming settings (overrides); ``footer(end)``:
    the usage line for the final message, or None;
    ``journal``: told each message as it appears (the reply in flight, for crash recovery; a
    :class:`~.delivery.session.ReplyJournal`); a cursor is shown only on a message it has recorded.

    ``prepare``, when given, runs once the reply has started (the chat shows
    the bot typing meanwhile: fetching and reading files takes a while) and
    returns the content, the history and a preface: lines the reply starts
    with (a file that could not be used), shown first and kept through a
    fallback's restart; the model never said them, so the recorded turn
    does not hold them. ``approver``: asked before a tool that needs approval
    runs (:mod:`.approvals.chat`)."""
    from .agent import AIAgent  # the agent pulls in the openai SDK: import it when a turn runs
    from .agent.read_batching import READ_BATCH, ReadBatch, read_batch_for

    owned = agent is None  # an agent made for this one turn is closed after it (its connection pool)
    agent = agent or AIAgent.from_config(config)
    progress = progress or TurnProgress()

    async def events():
        content, past, preface = (text, history, "") if prepare is None else await prepare()
        if content is None:  # nothing the model could answer (see Prepared): the preface is the whole reply
            yield TurnEnd(reply=preface)
            return
        lead = preface + "\n\n" if preface else ""
        if lead:
            yield TextDelta(lead)
        async for event in agent.astream(content, history=list(past or []), approver=approver):
            if not batch.seconds and session.tokens_may_wait:  # min_tokens are in (or nothing shows early)
                batch.seconds = read_batch_for(session.preview_interval)
            if isinstance(event, TurnEnd):
                progress.end = event
                if event.error and not event.reply.strip() and not event.interrupted:
                    # the person must not be left with silence; the details go to the log, not the chat
                    event = replace(event, reply=FAILURE_NOTICE)
                elif footer is not None and event.reply.strip() and not event.interrupted:
                    line = footer(event)  # usage.footer: on the final message only, never on previews
                    if line:
                        event = replace(event, reply=f"{event.reply}\n\n{line}")
                if event.note and not event.interrupted:  # cut by the gateway (model.max_reply_chars): say so
                    event = replace(event, reply=f"{event.reply}\n\n{event.note}")
                if lead:
                    event = replace(event, reply=lead + event.reply if event.reply.strip() else preface)
            yield event
            if lead and isinstance(event, StreamReset):
                yield TextDelta(lead)

    session = delivery.session(platform, chat_id, thread_id=thread_id, chat_kind=chat_kind, reply_to=reply_to,
                               settings=settings, journal=journal)
    progress.session = session
    session.interrupt_note = progress.interrupt_note
    # the chat shows the reply once per preview interval at most: once min_tokens are in, the upstream's tokens
    # are read in batches (agent/read_batching.py)
    batch = ReadBatch()
    batching = READ_BATCH.set(batch)
    try:
        report = await deliver_events(events(), session)
    finally:
        READ_BATCH.reset(batching)
        if owned:
            await agent.aclose()
    end = progress.end
    if end is not None and end.error and not report.text:
        report.error = report.error or end.error
    return report, end


async def answer_turn(parts: TurnParts, messages: Sequence[Incoming],
                      superseded: Callable[[], str | None] | None = None,
                      shown: Callable[[], None] | None = None) -> DeliveryReport:
    """Answer one or more messages of one chat in one turn (the inbound runtime's worker calls this).

    Cancelling the task that runs it stops the reply: the report then says
    ``interrupted`` and is returned, not raised, since a stop is an ordinary
    end of a turn. ``superseded()``: the line a stopped reply ends with when
    an edit of one of its messages stopped it (None otherwise); the turn is
    then not recorded (the history keeps the edited text, which is answered
    next). ``shown()`` is called once the reply is on the screen
    in full, before the turn is recorded: an edit from then on edits an
    answered message (a person who saw the whole reply and then fixed a typo
    is not answered again).
    """
    from .messages.turn import LOG_IDS, log_ids

    LOG_IDS.set(log_ids(messages[-1]))  # this turn's log lines carry its ids (logging.format: json)
    last = messages[-1]
    text: str | list[dict[str, Any]] = plain_text(messages)
    # voice (issue 22): a voice note is transcribed by the media pipeline's converter for its kind; a reply to
    # one may be followed by a voice note of its text (voice.reply)
    spoke = any(a.kind in VOICE_KINDS for m in messages for a in m.attachments)
    config, delivery = parts.config, parts.delivery()
    voice_reply = wants_voice_reply(config.voice, spoke) and sends_audio(delivery.hooks(last.platform))
    key = ConversationKey(last.platform, last.chat_id, last.thread_id)
    store = parts.store()
    # recorded first: a crash from here on (the history read, the chat's plan) finds the message (issue 26)
    journal = _journal(parts, messages, "\n\n".join(m.text for m in messages))
    try:
        try:
            history = await store.history(key)
        except StoreError as exc:  # the database went away: the person is still answered, without the history
            report_store_failure(store, log, "history not read", exc)
            history = []
        from .groups.room import with_room_context

        history = await with_room_context(config, store, last, history)  # a group's recent messages (issue 38)
        prepare = None
        if any(m.attachments for m in messages) or any(isinstance(m.get("content"), list) for m in history):
            settings = MediaSettings.from_config(config)

            async def prepare() -> Prepared:  # the files are fetched now, not before, with the bot typing
                nonlocal text
                content = await turn_content(messages, settings)
                text = content.stored
                if not content.answerable:
                    return None, [], content.preface
                return content.model, await history_for_model(history, settings), content.preface
        progress = TurnProgress()
        if superseded is not None:
            progress.interrupt_note = superseded
        from .operator.turns import prepare_turn

        plan = await prepare_turn(config, store, delivery, parts.agents(), last)  # the chat's model and persona
        from .approvals.chat import chat_approver

        approver = chat_approver(parts.approvals(), delivery, config.tools.approval, parts.client(last.platform),
                                 last, progress)  # tools.approval (issue 25)
        from .messages.turn import TURN

        TURN.set((parts, last))  # which chat a reminder the model sets is for (issue 24)
    except BaseException as exc:
        if journal is not None and not (isinstance(exc, asyncio.CancelledError) and not journal.failed
                                        and cut_here()):
            await asyncio.shield(journal.end())  # no reply will come of it: nothing to recover
        raise
    try:
        report, end = await reply_in_chat(config, delivery, last.platform, last.chat_id, text,
                                          history=history, thread_id=last.thread_id, chat_kind=last.chat_kind,
                                          reply_to=last.message_id, agent=plan.agent, progress=progress,
                                          settings=plan.stream_settings, footer=plan.footer, prepare=prepare,
                                          journal=journal,
                                          approver=approver)
    except asyncio.CancelledError:
        # stopped (/stop, a message under the interrupt policy, shutdown): the reply keeps what was shown,
        # and the conversation remembers that much of it; the stop is this turn's normal end
        report = DeliveryReport(interrupted=True)
        if progress.session is not None:
            report = await asyncio.shield(progress.session.interrupt())
        if journal is not None:
            await journal.settle()
        if superseded is not None and superseded():
            if journal is not None:  # an edit stopped it: the edited text is answered next, nothing to recover
                await journal.end()
        elif journal is not None and not journal.failed and cut_here():
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
    if shown is not None:
        shown()
    if end is not None and end.error:
        report.model_error = end.error
    usage = plan.record_usage(store, last, end) if end is not None else None
    await _unstoppable(_bookkeeping(store, key, text, report, end, journal, usage))
    if voice_reply and end is not None and not end.error and not report.interrupted and end.reply.strip():
        await follow_with_voice_note(config, delivery, last, end.reply, report)  # voice.reply: after the text, not before
    return report


async def _bookkeeping(store: Any, key: ConversationKey, text: Any, report: DeliveryReport, end: TurnEnd | None,
                       journal: "InFlightJournal | None", usage: Awaitable[None] | None = None) -> None:
    """After the final reply: record the turn and clear its reply in flight; ``usage``: the turn's usage record.

    The turn and its usage are written side by side (once the reply in flight is settled): queued together,
    the store's thread takes them in one hand-off and one COMMIT (``store/sqlite_queue.py``) instead of one
    after the other (issue 39: each reply's end, a thousand of them after the model's last token).
    """
    if journal is not None:
        await journal.settle()
    record: Awaitable[None] | None = None
    if end is not None and not (end.error and not end.reply):
        turn = end.messages if not end.interrupted else _interrupted_turn(text, report.text)
        record = _record(store, key, with_stored_user(turn, text), journal)
    elif journal is not None:
        record = journal.end()
    writes = [w for w in (record, usage) if w is not None]
    if len(writes) == 2:
        await asyncio.gather(*writes)
    elif writes:
        await writes[0]


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


def _journal(parts: TurnParts, messages: Sequence[Incoming], text: str) -> "InFlightJournal | None":
    """Record the reply as in flight (crash recovery), unless this gateway cannot say who it is."""
    from uuid import uuid4

    from .recovery.journal import InFlightJournal
    from .store.base import ReplyInFlight

    owner = getattr(parts.coordination(), "replica_id", None)
    if owner is None:
        return None
    last = messages[-1]
    retries = parts.retries()
    attempt = 0
    for m in messages:
        if (m.platform, m.chat_id, m.message_id) in retries:
            retries.discard((m.platform, m.chat_id, m.message_id))
            attempt = 1
    reply = ReplyInFlight(uuid4().hex, last.platform, last.chat_id, last.thread_id, last.chat_kind, last.message_id,
                          text, owner, attempt=attempt)
    return InFlightJournal(parts.store(), reply)


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


def _interrupted_turn(text: str | list[dict[str, Any]], shown: str) -> list[dict[str, Any]]:
    turn: list[dict[str, Any]] = [{"role": "user", "content": text}]
    if shown:
        turn.append({"role": "assistant", "content": shown})
    return turn


async def send_text(delivery: Delivery, incoming: Incoming, text: str) -> DeliveryReport:
    """A short answer of the core's own (a command's), delivered like any reply: budget, 429s, split."""
    session = delivery.session(incoming.platform, incoming.chat_id, thread_id=incoming.thread_id,
                               chat_kind=incoming.chat_kind, reply_to=incoming.message_id)
    return await session.finish(text)
