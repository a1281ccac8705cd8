"""Approval buttons on Discord: message components, and the ``INTERACTION_CREATE`` a press sends.

``offer_choice`` sends the question with an action row of buttons (each
``custom_id`` is the core's payload, under Discord's 100 characters);
``close_choice`` edits the message to the outcome with no components. A
press arrives over the gateway websocket as a component interaction; it
becomes a ``ChoiceAnswer`` for ``context.choose``, and the interaction is
answered within Discord's 3 seconds with an ephemeral message (only the
presser sees it) carrying the core's line.
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_gateway import Choice, ChoiceAnswer, MessageRef, PlatformContext, Stream

from .redaction import scrub
from .sdk import sdk

log = logging.getLogger(__name__)

NAME = "discord"
#: Interaction callback type 4 (a message in reply), flag 64 (ephemeral: only the presser sees it).
CHANNEL_MESSAGE, EPHEMERAL = 4, 64
_STYLES = {"primary": "success", "danger": "danger"}


def view_of(choice: Choice) -> Any:
    """A discord.py ``View`` with one button per option (it only serialises them: presses are ours)."""
    discord = sdk()
    view = discord.ui.View(timeout=None)
    for option in choice.options:
        style = getattr(discord.ButtonStyle, _STYLES.get(option.style, "secondary"))
        view.add_item(discord.ui.Button(label=option.label, custom_id=choice.payload(option), style=style))
    return view


async def offer_choice(client: Any, stream: Stream, choice: Choice) -> MessageRef:
    none = sdk().AllowedMentions.none()
    view = view_of(choice)
    sent = await client.call(stream, "messages", "create message",
                             lambda channel: channel.send(choice.prompt, view=view, allowed_mentions=none))
    view.stop()  # discord.py would keep it to dispatch presses; the client's on_interaction takes them
    return MessageRef(stream.chat_id, str(sent.id), stream.thread_id)


async def close_choice(client: Any, stream: Stream, ref: MessageRef, text: str) -> None:
    none = sdk().AllowedMentions.none()
    await client.call(stream, "messages", "edit message",
                      lambda channel: channel.get_partial_message(int(ref.message_id))
                      .edit(content=text, view=None, allowed_mentions=none))


def answer_of(interaction: Any) -> ChoiceAnswer | None:
    """The press a component interaction stands for; None when it is not one of our buttons."""
    discord = sdk()
    if interaction.type != discord.InteractionType.component or interaction.user is None:
        return None
    data = interaction.data or {}
    channel = interaction.channel
    chat_id = channel.parent_id if isinstance(channel, discord.Thread) else interaction.channel_id
    return ChoiceAnswer.from_payload(NAME, str(chat_id), str(interaction.user.id), str(data.get("custom_id", "")))


async def on_interaction(context: PlatformContext, http: Any, interaction: Any) -> None:
    """Hand a press to the core and answer the interaction (ephemeral) with the core's line."""
    answer = answer_of(interaction)
    if answer is None:
        return
    notice = await context.choose(answer) or "OK"
    route = sdk().http.Route("POST", "/interactions/{interaction_id}/{interaction_token}/callback",
                             interaction_id=interaction.id, interaction_token=interaction.token)
    try:  # discord.py's own response helper ignores the configured api_base_url: the client's HTTP does not
        await http.request(route, json={"type": CHANNEL_MESSAGE, "data": {"content": notice, "flags": EPHEMERAL}})
    except Exception as exc:
        log.info("discord: answering a button press failed: %s", scrub(f"{type(exc).__name__}: {exc}"))
