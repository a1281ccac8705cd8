"""The built-in ``reference`` platform: an in-memory chat for trying the gateway.

``hermes-gateway ask --platform reference --chat 1 "hello"`` streams a reply
into it with real pacing and prints what the chat's screen shows. Its limits
mimic a Telegram private chat: 4096 UTF-16 units, one call per second,
and attachments as the Bot API takes them (photos to 10 MB, files to 50 MB,
captions of 1024), shown on its screen as ``[image: qr.png] caption``.
"""

from ..media import MediaLimits
from ..platform import RateBudget
from .reference_platform import ReferencePlatform

platform = ReferencePlatform(
    "reference",
    max_message_length=4096,
    length_unit="utf16",
    budgets={"default": RateBudget(rate=1.0, burst=1), "group": RateBudget(rate=20 / 60, burst=3)},
    media=MediaLimits(max_bytes={"image": 10_000_000, "default": 50_000_000}, caption_length=1024),
)

register_platforms = platform.register_platforms  # its stream methods are its client's (ReferenceClient)
