"""Images for a model that cannot look at them: each image part becomes a one-line stand-in.

``model.vision: false`` keeps images from ever being fetched for a chat,
and the API server refuses them; but a turn that starts on a model that
sees can fall back to one that does not (``model.fallback[i].vision:
false``): that request gets the turn's images as text stand-ins instead
of a 400 from an upstream that takes no images.
"""

from __future__ import annotations

from typing import Any, Sequence

IMAGE_PART_TYPES = ("image_url", "input_image")
STAND_IN = {"type": "text", "text": "[an image the person sent: this model cannot look at images]"}


def has_images(messages: Sequence[dict[str, Any]]) -> bool:
    return any(isinstance(m.get("content"), list) and any(isinstance(p, dict) and p.get("type") in IMAGE_PART_TYPES
                                                         for p in m["content"]) for m in messages)


def without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with every image part replaced by :data:`STAND_IN` (the same list when there is none)."""
    if not has_images(messages):
        return messages
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [dict(STAND_IN) if isinstance(p, dict) and p.get("type") in IMAGE_PART_TYPES else p
                       for p in content]
            message = {**message, "content": content}
        out.append(message)
    return out
