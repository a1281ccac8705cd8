"""Approval buttons on Slack: Block Kit buttons, and the ``block_actions`` a press sends.

``offer_choice`` posts the question (``text`` as the notification fallback,
a ``section`` with it and an ``actions`` block with one button per option,
each ``action_id`` the core's payload) into the reply's thread;
``close_choice`` updates the message to the outcome with no blocks. A press
comes over Socket Mode (an ``interactive`` envelope) or, in HTTP mode, to
the interactivity Request URL (``/webhooks/slack/interactivity``, signed
like events); bolt acknowledges it, the press becomes a ``ChoiceAnswer``
for ``context.choose``, and the core's line is shown to the presser only
(``chat.postEphemeral``).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable

from hermes_gateway import Choice, ChoiceAnswer, MessageRef, PlatformContext, Stream

from .redaction import scrub

log = logging.getLogger(__name__)

INTERACTIVITY_PATH = "/webhooks/slack/interactivity"
_ACTION = re.compile(r"^hgc:")
_STYLES = {"primary": "primary", "danger": "danger"}


def blocks_of(choice: Choice) -> list[dict[str, Any]]:
    buttons = []
    for option in choice.options:
        button: dict[str, Any] = {"type": "button", "text": {"type": "plain_text", "text": option.label[:75]},
                                  "action_id": choice.payload(option), "value": option.value}
        if option.style in _STYLES:
            button["style"] = _STYLES[option.style]
        buttons.append(button)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": choice.prompt[:3000]}},
            {"type": "actions", "block_id": f"choice-{choice.choice_id}", "elements": buttons}]


async def offer_choice(client: Any, stream: Stream, choice: Choice) -> MessageRef:
    args: dict[str, Any] = {"channel": stream.chat_id, "text": choice.prompt, "blocks": blocks_of(choice)}
    if stream.thread_id:
        args["thread_ts"] = stream.thread_id
    answer = await client.outbound._call("chat_postMessage", **args)
    return MessageRef(stream.chat_id, str(answer["ts"]), stream.thread_id)


async def close_choice(client: Any, stream: Stream, ref: MessageRef, text: str) -> None:
    await client.outbound._call("chat_update", channel=ref.chat_id, ts=ref.message_id, text=text, blocks=[])


def answer_of(platform: str, body: dict[str, Any]) -> ChoiceAnswer | None:
    """The press a ``block_actions`` payload stands for; None when it is not one of our buttons."""
    actions = body.get("actions") or []
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    user = (body.get("user") or {}).get("id")
    if not actions or not channel or not user:
        return None
    return ChoiceAnswer.from_payload(platform, str(channel), str(user), str(actions[0].get("action_id", "")))


def register(app: Any, context: PlatformContext, web: Callable[[], Any]) -> None:
    """Add the button listener to the bolt app (acknowledged first, as Slack wants within 3 seconds)."""

    @app.action(_ACTION)
    async def pressed(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        answer = answer_of(context.platform, body)
        notice = await context.choose(answer) if answer is not None else None
        if not notice or answer is None:
            return
        args: dict[str, Any] = {"channel": answer.chat_id, "user": answer.user_id, "text": notice}
        thread = (body.get("message") or {}).get("thread_ts")
        if thread:
            args["thread_ts"] = thread
        try:
            await web().chat_postEphemeral(**args)
        except Exception as exc:
            log.info("slack: showing the answer to a button press failed: %s", scrub(f"{type(exc).__name__}: {exc}"))
