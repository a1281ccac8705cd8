"""Approval buttons on Teams: an Adaptive Card with one ``Action.Submit`` per option.

``offer_choice`` posts a message whose attachment is the card
(``application/vnd.microsoft.card.adaptive``: a ``TextBlock`` with the
question, one ``Action.Submit`` per option whose ``data`` is
``{"hgc": <the core's payload>}``); ``close_choice`` updates that message to
the outcome, without the card. A press reaches the bot either as a
``message`` activity whose ``value`` is the button's data (classic Teams
clients) or as an ``invoke`` named ``adaptiveCard/action`` whose
``value.action.data`` is (PLATFORM_FACTS: handle both); the invoke is
answered in its HTTP response with the core's line for the presser
(``application/vnd.microsoft.activity.message``), which Teams shows to them
only.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Choice

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
DATA_KEY = "hgc"
_STYLES = {"primary": "positive", "danger": "destructive"}


def card_of(choice: Choice) -> dict[str, Any]:
    actions = []
    for option in choice.options:
        action: dict[str, Any] = {"type": "Action.Submit", "title": option.label[:80],
                                  "data": {DATA_KEY: choice.payload(option)}}
        if option.style in _STYLES:
            action["style"] = _STYLES[option.style]
        actions.append(action)
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "version": "1.4", "body": [{"type": "TextBlock", "text": choice.prompt[:4000], "wrap": True}],
            "actions": actions}


def attachment_of(choice: Choice) -> Any:
    from microsoft_teams.api.models.attachment.attachment import Attachment

    return Attachment(content_type=CARD_TYPE, content=card_of(choice))


def payload_of(value: Any) -> str | None:
    """The core's payload in a press: ``value`` of a message activity, or of an ``adaptiveCard/action`` invoke."""
    if not isinstance(value, dict):
        return None
    action = value.get("action")
    if isinstance(action, dict):
        value = action.get("data")
    payload = value.get(DATA_KEY) if isinstance(value, dict) else None
    return payload if isinstance(payload, str) and len(payload) <= 100 else None


def invoke_answer(text: str) -> dict[str, Any]:
    """The HTTP body answering an ``adaptiveCard/action`` invoke: a message shown to the presser."""
    return {"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": text}
