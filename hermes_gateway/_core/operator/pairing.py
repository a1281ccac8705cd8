"""Pairing codes: how an unknown user asks to be let in, and how an operator lets them.

A code is 8 characters from a 31-letter alphabet without look-alikes
(no 0/O, 1/I/L), drawn with :mod:`secrets`: about 2^40 possibilities, and
only an admin or the operator can try one. Shown as ``ABCD-EFGH``; typed
in any case, with or without the dash or spaces. A user has one pending
code at a time (asking again gives the same one until it expires, after
``access.pairing_ttl``), and gets it answered at most once a minute however
often they write. Logs only ever carry its first two characters.
"""

from __future__ import annotations

import re
import secrets

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 8
#: A user who keeps writing sees their code again at most this often (seconds).
REPEAT_AFTER = 60.0


def new_code() -> str:
    """A fresh, unguessable code (stored without the dash)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(typed: str) -> str:
    """What a person typed (``abcd-efgh``, ``ABCD EFGH``) as stored (``ABCDEFGH``)."""
    return re.sub(r"[\s-]", "", typed).upper()


def shown(code: str) -> str:
    """``ABCD-EFGH``: easier to read out and type."""
    return f"{code[:4]}-{code[4:]}" if len(code) == LENGTH else code


def masked(code: str) -> str:
    """What a log line may carry of a code: its first two characters."""
    return code[:2] + "…"


def lifetime_text(seconds: float) -> str:
    """How long a code stays valid, never said longer than it is: ``8 s``, ``90 s``, ``2 min``, ``1 h 30 min``.

    Whole seconds (to the nearest: the float sum ``now + ttl - now`` is not
    exact), then each larger unit rounded down, so a code of 8 s never says
    "1 min" and one of 150 s says "2 min", not 3.
    """
    whole = max(1, round(seconds))
    if whole < 120:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min"
    hours, minutes = whole // 3600, whole % 3600 // 60
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def code_message(code: str, ttl: float) -> str:
    """The only answer an unknown user gets (``ttl``: the seconds the code has left)."""
    valid = lifetime_text(ttl)
    return (f"🔐 I only talk to approved people. Your pairing code is {shown(code)} (valid for {valid}). "
            f"Send it to the bot's operator to be let in.")
