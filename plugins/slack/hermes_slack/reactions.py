"""Status reactions on Slack: ``reactions.add(channel, timestamp, name)``, the emoji by its Slack name.

Slack names emoji (``eyes``, ``+1``), it does not take the characters: the
status emoji people configure are mapped through :data:`SLACK_NAMES`; a
value that is already a name (``white_check_mark``, ``:tada:``) is used as
is. ``already_reacted`` is success (a redelivered status). Slack keeps
every reaction the bot adds, so 👀 stays beside 👍.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_gateway import DeliveryError

from .errors import error_code, translate

#: Unicode emoji -> Slack's name, for the status reactions people use (variation selector dropped).
SLACK_NAMES = {
    "👀": "eyes", "👍": "+1", "👎": "-1", "😢": "cry", "🤔": "thinking_face", "✍": "writing_hand",
    "👨‍💻": "male-technologist", "⚡": "zap", "👌": "ok_hand", "🎉": "tada", "🤷": "shrug",
    "✅": "white_check_mark",
    "❌": "x", "⏳": "hourglass_flowing_sand", "⌛": "hourglass", "❤": "heart", "🔥": "fire", "💯": "100",
    "🙏": "pray", "😕": "confused", "⚠": "warning", "🚫": "no_entry_sign", "✔": "heavy_check_mark",
}
_NAME = re.compile(r"^:?([a-z0-9_+\-']+):?$")


def slack_name(emoji: str) -> str | None:
    """The name Slack knows ``emoji`` by, or None."""
    named = _NAME.match(emoji)
    if named:
        return named.group(1)
    return SLACK_NAMES.get(emoji.replace("\ufe0f", ""))


async def add_reaction(web: Any, channel: str, ts: str, emoji: str) -> None:
    """``reactions.add`` on one message; a failure is a DeliveryError (429: RateLimited)."""
    name = slack_name(emoji)
    if name is None:
        raise DeliveryError(f"slack reactions.add: no Slack name known for {emoji!r}; configure its name "
                            f"(e.g. \"eyes\")", retryable=False)
    try:
        await web.reactions_add(channel=channel, timestamp=ts, name=name)
    except Exception as exc:
        if error_code(exc) == "already_reacted":
            return
        raise translate(exc, "reactions.add") from None
