"""A verified activity, read into what the core understands: an ``Incoming``, or a button press.

Kinds (``conversation.conversationType``): ``personal`` is ``private`` (one
person: answered without a mention), ``groupChat`` is ``group``,
``channel`` is ``channel``. Teams delivers a group or channel message to a
bot only when it is @mentioned (PLATFORM_FACTS), as
``<at>Bot</at> …`` in ``text`` plus a ``mention`` entity whose
``mentioned.id`` is the bot's: ``mentioned`` is that, and the bot's own
mention is cut from the text (other people's mentions keep their names).

Files people send: ``application/vnd.microsoft.teams.file.download.info``
attachments carry a pre-authenticated ``downloadUrl`` (fetched with no
token); inline images are ``image/*`` with a ``contentUrl`` on the Bot
Connector, which wants the bot's token — sent only to the conversation's
own service URL host, never to another host. Nothing is downloaded until
the core asks (``Attachment.fetch``).
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Literal
from urllib.parse import urlsplit

from hermes_gateway import Attachment, Incoming, stream_download

KINDS = {"personal": "private", "groupChat": "group", "channel": "channel"}
FILE_INFO = "application/vnd.microsoft.teams.file.download.info"
#: Teams' limit for a file a bot receives is the tenant's; this bounds one download (the core bounds it again).
MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024
_IMAGE_TYPES = {"png", "jpg", "jpeg", "gif", "webp", "bmp"}
_SPACES = re.compile(r"[ \t]+")

Session = Callable[[], Awaitable[Any]]
Token = Callable[[], Awaitable[str]]


def incoming_of(activity: Any, platform: str, session: Session, token: Token) -> Incoming:
    from microsoft_teams.api.activities.utils import StripMentionsTextOptions, strip_mentions_text

    recipient = activity.recipient.id if activity.recipient else None
    text = strip_mentions_text(activity, StripMentionsTextOptions(account_id=recipient)) or ""
    text = _SPACES.sub(" ", text).strip()
    conversation = activity.conversation
    return Incoming(
        platform=platform, chat_id=conversation.id, text=text,
        sender_id=activity.from_.id if activity.from_ else None, update_id=activity.id, message_id=activity.id,
        chat_kind=KINDS.get(conversation.conversation_type or "", "group"),
        mentioned=activity.is_recipient_mentioned(),
        bot_name=activity.recipient.name if activity.recipient else None,
        attachments=tuple(attachments_of(activity, session, token)),
    )


def attachments_of(activity: Any, session: Session, token: Token) -> list[Attachment]:
    found = []
    service_host = urlsplit(activity.service_url or "").netloc
    for item in activity.attachments or []:
        content_type = item.content_type or ""
        if content_type == FILE_INFO and isinstance(item.content, dict):
            url = item.content.get("downloadUrl")
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                continue
            name = item.name or "file"
            file_type = str(item.content.get("fileType") or name.rsplit(".", 1)[-1]).lower()
            kind: Literal["image", "document"] = "image" if file_type in _IMAGE_TYPES else "document"
            found.append(Attachment(kind, _fetcher(session, url, name, None), filename=name))
        elif content_type.startswith("image/") and isinstance(item.content_url, str):
            url = item.content_url
            if not url.startswith(("https://", "http://")):
                continue  # a data: URI or another scheme: nothing the bot fetches
            bearer = token if urlsplit(url).netloc == service_host else None
            name = item.name or "image." + content_type.split("/", 1)[1].split(";")[0][:10]
            found.append(Attachment("image", _fetcher(session, url, name, bearer), mime=content_type, filename=name))
    return found


def _fetcher(session: Session, url: str, name: str, token: Token | None) -> Callable[[], Any]:
    async def fetch() -> Any:
        headers = {"Authorization": f"Bearer {await token()}"} if token is not None else None
        async for chunk in stream_download(await session(), url, what=f"teams: the file {name!r}",
                                           max_bytes=MAX_DOWNLOAD_BYTES, headers=headers,
                                           status_notes={401: "the bot may not read it", 404: "it is gone"}):
            yield chunk

    return fetch
