"""Text and files into a chat, through the same delivery core as every reply.

What ``hermes-gateway send`` and a schedule's ``text:`` use: one
:class:`~hermes_gateway._core.delivery.StreamSession` that is only ever
finished, so the text is rendered as the platform renders replies, split at
its limit, paced by the chat's budget (shared with the running replicas
when ``coordination.url`` is set), 429s waited out, and every message and
file sent exactly once (the session's ledgers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import HermesError
from ..delivery import Delivery, DeliveryReport
from ..media import Media


class FileUnreadable(HermesError):
    """A file named for sending cannot be read: one line naming it."""


def read_files(paths: Sequence[str | Path]) -> tuple[Media, ...]:
    """Each file as an attachment of its bytes (read now: a file that is missing fails before anything is sent).

    Bytes, not paths: a path outside the media directory is refused by the
    delivery core (tools may only attach what is there), while a file an
    operator names on the command line is theirs to send.
    """
    items = []
    for raw in paths:
        path = Path(raw)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise FileUnreadable(f"cannot read {raw}: {exc.strerror or exc}") from exc
        items.append(Media(data=data, filename=path.name))
    return tuple(items)


async def send_to_chat(delivery: Delivery, platform: str, chat_id: str, text: str, *, thread_id: str | None = None,
                       media: Sequence[Media] = (), chat_kind: str | None = None) -> DeliveryReport:
    """Deliver ``text`` and then ``media`` into one chat as one reply (no typing, no previews: it is final)."""
    session = delivery.session(platform, str(chat_id), thread_id=thread_id, chat_kind=chat_kind)
    return await session.finish(text, tuple(media))


def delivered_all(report: DeliveryReport, media: Sequence[Media]) -> str | None:
    """None when the text and every file arrived; else one line saying what did not."""
    if not report.delivered:
        return report.error or "not delivered"
    if report.media_notes:
        return "; ".join(report.media_notes)
    if report.media_uncertain:
        return f"{report.media_uncertain} file(s) may not have arrived (the upload timed out)"
    if media and len(report.media) < len(media):
        return f"{len(media) - len(report.media)} file(s) not sent"
    return None
