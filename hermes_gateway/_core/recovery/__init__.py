"""Crash recovery: every reply in flight is recorded (:mod:`.journal`) and, when its process died, finished
by another start or replica (:mod:`.recover`) — cursor removed, a short note or one retry, history kept."""

from ..delivery.preview import clean_preview
from .journal import InFlightJournal
from .recover import CRASH_NOTE, Recovery

__all__ = ["CRASH_NOTE", "InFlightJournal", "Recovery", "clean_preview"]
