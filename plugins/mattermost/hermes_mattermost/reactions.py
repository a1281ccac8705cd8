"""Status reactions: ``POST /api/v4/reactions {user_id, post_id, emoji_name}``, the emoji by its name.

Mattermost names emoji (``eyes``, ``+1``, ``white_check_mark``); it takes no
characters. The status emoji people configure are mapped through
:data:`NAMES`; a value that already is a name (``tada``, ``:tada:``) is used
as is. Adding a reaction the bot already has is success on the server.
"""

from __future__ import annotations

import re

from hermes_gateway import DeliveryError

#: Unicode emoji -> Mattermost's name (variation selectors dropped before the lookup).
NAMES = {
    "👀": "eyes", "👍": "+1", "👎": "-1", "😢": "cry", "🤔": "thinking", "⚡": "zap", "👌": "ok_hand",
    "🎉": "tada", "✅": "white_check_mark", "❌": "x", "⏳": "hourglass_flowing_sand", "⌛": "hourglass",
    "❤": "heart", "🔥": "fire", "💯": "100", "🙏": "pray", "😕": "confused", "⚠": "warning",
    "🚫": "no_entry_sign", "✔": "heavy_check_mark", "✍": "writing_hand",
}
_NAME = re.compile(r"^:?([a-z0-9_+\-]{1,64}):?$")


def emoji_name(emoji: str) -> str:
    """The name Mattermost knows ``emoji`` by; DeliveryError when there is none."""
    named = _NAME.match(emoji)
    if named:
        return named.group(1)
    name = NAMES.get(emoji.replace("\ufe0f", ""))
    if name is None:
        raise DeliveryError(f"mattermost reactions: no Mattermost name known for {emoji!r}; configure its name "
                            f"(e.g. \"eyes\")", retryable=False)
    return name
