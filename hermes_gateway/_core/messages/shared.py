"""What a person shares that is not their own words, as the one line the model reads: a forward, a location.

Every platform plugin that receives these writes them the same way, so the
model reads a forwarded message or a pinned place alike whichever chat it
came from: a forward's words are someone else's (quoted, so the model does
not take them for the person's own, and a forwarded ``/command`` is no
command), and a location is its coordinates with what the platform names
the place.
"""

from __future__ import annotations


def forwarded_text(text: str, sender: str | None = None) -> str:
    """``text`` as a forwarded message: ``[forwarded message from SENDER]`` and each of its lines quoted (``> ``).

    The plugin cuts ``sender`` to a sane length; ``text`` is quoted as given (strip it first if the
    platform pads it).
    """
    head = f"[forwarded message from {sender}]" if sender else "[forwarded message]"
    return head + "\n" + "\n".join(f"> {line}" for line in text.splitlines())


def location_text(latitude: float, longitude: float, place: str = "", *, live: bool = False) -> str:
    """A shared location: ``[a place: PLACE (lat, lon)]``, or ``[a location: lat, lon]`` without a name
    (``[a location (live): ...]`` for one that keeps moving); six decimals, about 10 cm."""
    where = f"{float(latitude):.6f}, {float(longitude):.6f}"
    if place:
        return f"[a place: {place} ({where})]"
    return f"[a location{' (live)' if live else ''}: {where}]"
