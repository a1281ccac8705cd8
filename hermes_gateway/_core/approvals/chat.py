"""The approver of one chat turn: ask in the chat, wait for the allowed person's answer, tell the agent.

The question is shown with buttons when the platform's client has
``offer_choice`` (:mod:`.choice`), else as a line with ``/allow ID`` and
``/deny ID`` to type. Meanwhile the reply's preview shows that it waits for
approval; afterwards the question's message says how it ended (approved,
denied, timed out). A timeout, a deny or a stopped turn never runs the tool.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..platform import MessageRef, Stream
from .answers import Approvals
from ..messages.choice import Choice, ChoiceOption
from .desk import APPROVE, DENY, Question
from ..approval_policy import ApprovalPolicy

if TYPE_CHECKING:
    from ..delivery import Delivery

log = logging.getLogger(__name__)

#: ``approver(tool_name, arguments_json) -> run it?``: what the agent awaits before a tool that needs approval.
Approver = Callable[[str, str], Awaitable[bool]]

ARGUMENTS_CHARS = 300
#: Seconds (429 waits added) the question's message may take to show the outcome before it is left as it is.
CLOSE_WITHIN = 30.0


def shorten_arguments(arguments: str, limit: int = ARGUMENTS_CHARS) -> str:
    """The call's arguments on one line, at most ``limit`` characters."""
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False) if arguments.strip() else "{}"
    except ValueError:
        text = " ".join(arguments.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def prompt_text(tool: str, arguments: str, timeout: float) -> str:
    return (f"🔐 Approve running the tool {tool}?\nArguments: {shorten_arguments(arguments)}\n"
            f"(no answer within {timeout:g}s counts as deny)")


def commands_hint(question_id: str, prefix: str = "/") -> str:
    """The commands to type, with the platform's command prefix (``!`` where the clients take ``/``)."""
    return f"Answer {prefix}allow {question_id} or {prefix}deny {question_id}"


def chat_approver(approvals: Approvals, delivery: "Delivery", policy: ApprovalPolicy, client: Any, incoming: Any,
                  progress: Any) -> Approver | None:
    """The approver for a turn answering ``incoming``; None when ``tools.approval.require`` is empty.

    ``client``: the platform's running client (its ``offer_choice`` shows buttons), or None.
    ``progress``: the turn's :class:`~hermes_gateway._core.conversation.TurnProgress` (its session shows
    the waiting line in the preview).
    """
    if not policy.require:
        return None
    access = approvals.access
    requester = str(incoming.sender_id or "")
    if policy.who == "admin":
        def may_answer(platform: str, user_id: str) -> bool:
            return access.is_admin(platform, user_id)
        who = "an admin"
    else:
        def may_answer(platform: str, user_id: str) -> bool:
            return bool(requester) and platform == incoming.platform and user_id == requester
        who = "the person who asked"

    async def approve(tool: str, arguments: str) -> bool:
        if not policy.needs(tool):
            return True
        desk = approvals.desk
        question = desk.open(incoming.platform, incoming.chat_id, tool, may_answer, who)
        session = getattr(progress, "session", None)
        if session is not None:
            session.set_status(f"⏸ waiting for approval: {tool}")
        stream = session.stream if session is not None else None
        ref: MessageRef | None = None
        outcome = "⌛ Not answered in time: {tool} was not run."
        try:
            await approvals.publish(question, requester, policy.who, policy.timeout)  # answerable on any replica
            ref = await _ask(delivery, incoming, client, stream, question, arguments, policy.timeout)
            try:
                option, user = await asyncio.wait_for(asyncio.shield(question.decided), policy.timeout)
            except TimeoutError:
                option, user = await approvals.settle(question, DENY, "")  # unless a replica decided just now
                if not user:
                    log.info("%s: approval of %s in chat %s timed out", incoming.platform, tool, incoming.chat_id)
                    return False
            approved = option == APPROVE
            outcome = ("✅ Approved: running {tool}." if approved else "❌ Denied: {tool} was not run.")
            log.info("%s: %s %s in chat %s (user %s)", incoming.platform, "approved" if approved else "denied",
                     tool, incoming.chat_id, user)
            return approved
        except asyncio.CancelledError:
            outcome = "⏹ Stopped: {tool} was not run."
            raise
        finally:
            desk.close(question)
            if session is not None:
                session.set_status("")
            if ref is not None and stream is not None and callable(getattr(client, "close_choice", None)):
                await asyncio.shield(_close(delivery, incoming, client, stream, ref,
                                            outcome.format(tool=tool)))

    return approve


async def _ask(delivery: "Delivery", incoming: Any, client: Any, stream: Stream | None, question: Question,
               arguments: str, timeout: float) -> MessageRef | None:
    """Show the question: buttons when the client can, else the commands to type.

    The buttons go through the chat's budget and 429 handling like every call
    into the chat (:meth:`~hermes_gateway._core.delivery.Delivery.call`),
    ahead of the reply's previews: after a 429 they are shown once
    ``retry_after`` has passed. Only when they cannot be shown for good are
    the commands sent instead.
    """
    text = prompt_text(question.tool, arguments, timeout)
    if stream is not None and callable(getattr(client, "offer_choice", None)):
        choice = Choice(question.question_id, text, (ChoiceOption(APPROVE, "Approve", "primary"),
                                                     ChoiceOption("deny", "Deny", "danger")))
        shown = await delivery.call(incoming.platform, incoming.chat_id,
                                            lambda: client.offer_choice(stream, choice), what="approval buttons",
                                            chat_kind=incoming.chat_kind, within=timeout)
        if shown.ok and isinstance(shown.value, MessageRef):
            return shown.value
        # buttons that cannot be shown (or that may have been, unknown where): the commands still work
        log.warning("%s: could not show approval buttons (%s); the commands to type are sent instead",
                    incoming.platform, shown.failure or f"offer_choice returned {shown.value!r}")
    # as the core's own short answers are sent (budget, 429s, split), without importing the turn above us
    session = delivery.session(incoming.platform, incoming.chat_id, thread_id=incoming.thread_id,
                                       chat_kind=incoming.chat_kind, reply_to=incoming.message_id)
    prefix = session.hooks.platform.command_prefix
    await session.finish(f"{text}\n{commands_hint(question.question_id, prefix)}")
    return None


async def _close(delivery: Delivery, incoming: Any, client: Any, stream: Stream, ref: MessageRef,
                 text: str) -> None:
    """The question's message says how it ended: through the chat's budget, a 429 waited out (best effort)."""
    closed = await delivery.call(incoming.platform, incoming.chat_id, lambda: client.close_choice(stream, ref, text),
                                 what="approval outcome", chat_kind=incoming.chat_kind, within=CLOSE_WITHIN)
    if not closed.ok:  # the outcome stands even if the message could not be updated
        log.info("%s: could not update the approval message (%s)", incoming.platform, closed.failure)
