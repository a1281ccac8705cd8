"""Webhook deliveries from Meta: the signature, the verification handshake, and the payload.

Nothing here touches the network or the core: :func:`verify_signature`
checks ``X-Hub-Signature-256`` against the raw body (before anything parses
it), :func:`handshake` answers the subscription check, and :func:`parse`
turns a verified body into what the plugin acts on: text messages, media
messages (a photo, a document, a voice note...: their media id, type and
caption), other messages (answered with a notice), statuses, and the
problems found (for one log line). A malformed payload is never an exception: Meta would retry a
5xx for days.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from hermes_gateway import forwarded_text, location_text

SIGNATURE_HEADER = "X-Hub-Signature-256"
#: Message types that carry a file (a media id to download), handed to the core as an attachment.
MEDIA_TYPES = frozenset({"image", "audio", "video", "document", "sticker"})
#: Message types that carry nothing the model can use: answered with a short notice rather than silence.
NOTICE_TYPES = frozenset({"location", "contacts", "unsupported", "order"})  # location, contacts: when malformed
#: Messages that share something the model reads as one line (:func:`_text_of`).
SHARED_TYPES = frozenset({"location", "contacts"})
#: Message types that need no answer at all (a reaction, a changed number, a deleted message).
QUIET_TYPES = frozenset({"reaction", "system", "request_welcome", "ephemeral", "revoked"})


def signature(app_secret: str, body: bytes) -> str:
    """The header value Meta sends: ``sha256=<hex HMAC-SHA256(app_secret, body)>``."""
    return "sha256=" + hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(app_secret: str, body: bytes, header: str | None) -> bool:
    """Whether ``header`` signs ``body`` with ``app_secret`` (constant-time comparison)."""
    if not header:
        return False
    expected = signature(app_secret, body)
    return hmac.compare_digest(expected.encode("ascii"), header.strip().lower().encode("ascii", "replace"))


def handshake(query: Mapping[str, str], verify_token: str) -> str | None:
    """The challenge to echo when Meta's subscription check carries our verify token, else None."""
    if query.get("hub.mode") != "subscribe":
        return None
    given = query.get("hub.verify_token") or ""
    if not hmac.compare_digest(given.encode("utf-8"), verify_token.encode("utf-8")):
        return None
    challenge = query.get("hub.challenge")
    return challenge if challenge else None


@dataclass(frozen=True)
class MediaRef:
    """The file a media message carries, as the webhook describes it (the bytes are fetched by id, later)."""

    media_id: str
    mime: str | None = None
    sha256: str | None = None   # hex or base64, as Meta sends it: the downloaded bytes are checked against it
    filename: str | None = None  # documents only
    voice: bool = False          # an audio message recorded as a voice note


@dataclass(frozen=True)
class Message:
    """One message a user sent to our number."""

    wamid: str
    sender: str                 # the user's wa_id: where the reply goes
    kind: str                   # "text", "image", ...
    text: str = ""              # the text, for text-like messages; the caption of a photo, video or document
    name: str | None = None     # the user's profile name, if Meta sent it
    media: MediaRef | None = None  # the file of an image/audio/video/document/sticker message
    reply_id: str | None = None    # a tapped interactive reply button's id (approval buttons, issue 25)


#: The statuses Meta documents; any other is counted as "other" (one metric each, not one per odd value).
KNOWN_STATUSES = frozenset({"sent", "delivered", "read", "failed", "deleted", "warning"})


@dataclass(frozen=True)
class Status:
    """What happened to a message we sent: sent, delivered, read or failed."""

    wamid: str
    status: str
    recipient: str
    errors: tuple[tuple[int | None, str], ...] = ()


@dataclass
class Delivery:
    """Everything one webhook POST carried for our number."""

    messages: list[Message] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    other_numbers: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not self.messages and not self.statuses


def parse(body: bytes, phone_number_id: str) -> Delivery:
    """Read a verified webhook body; whatever cannot be read becomes a problem, never an exception."""
    found = Delivery()
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        found.problems.append(f"the body is not JSON ({type(exc).__name__})")
        return found
    if not isinstance(payload, dict):
        found.problems.append("the body is not a JSON object")
        return found
    if payload.get("object") != "whatsapp_business_account":
        found.problems.append(f"object is {str(payload.get('object'))[:40]!r}, not 'whatsapp_business_account'")
        return found
    for entry in _list(payload.get("entry"), "entry", found):
        for change in _list(_get(entry, "changes"), "entry[].changes", found):
            if not isinstance(change, dict):
                found.problems.append("a change is not an object")
                continue
            if change.get("field") != "messages":
                continue  # account updates, template reviews...: not ours to act on
            value = change.get("value")
            if not isinstance(value, dict):
                found.problems.append("a change has no value object")
                continue
            number = _get(_get(value, "metadata"), "phone_number_id")
            if str(number) != phone_number_id:
                found.other_numbers.add(str(number)[:32])
                continue
            names = _profile_names(value.get("contacts"))
            for raw in _list(value.get("messages"), "value.messages", found, optional=True):
                message = _message(raw, names, found)
                if message is not None:
                    found.messages.append(message)
            for raw in _list(value.get("statuses"), "value.statuses", found, optional=True):
                status = _status(raw, found)
                if status is not None:
                    found.statuses.append(status)
    return found


def _message(raw: Any, names: dict[str, str], found: Delivery) -> Message | None:
    if not isinstance(raw, dict):
        found.problems.append("a message is not an object")
        return None
    wamid, sender, kind = raw.get("id"), raw.get("from"), raw.get("type")
    if not (isinstance(wamid, str) and wamid and isinstance(sender, str) and sender and isinstance(kind, str)):
        found.problems.append("a message without id, from or type")
        return None
    text = _text_of(raw, kind)
    if kind in ("text", "button", "interactive") and text is None:
        found.problems.append(f"a {kind} message without its text")
        return None
    media = None
    if kind in MEDIA_TYPES:
        media = _media_of(raw.get(kind))
        if media is None:  # still answered (with the notice): the person sent something
            found.problems.append(f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} message without its media id")
        caption = _get(raw.get(kind), "caption")
        text = caption if isinstance(caption, str) else ""
    reply_id = _get(_get(raw.get("interactive"), "button_reply"), "id") if kind == "interactive" else None
    context = raw.get("context")
    if text and (_get(context, "forwarded") is True or _get(context, "frequently_forwarded") is True):
        # someone else's words: quoted, as Telegram's, Discord's and Slack's forwards reach the model
        text = forwarded_text(text)
    return Message(wamid=wamid, sender=sender, kind=kind, text=text or "", name=names.get(sender), media=media,
                   reply_id=reply_id if isinstance(reply_id, str) else None)


def _media_of(body: Any) -> MediaRef | None:
    """``{"id", "mime_type", "sha256", "filename"?, "voice"?}`` of a media message; None without an id."""
    media_id = _get(body, "id")
    if not isinstance(media_id, str) or not media_id.strip():
        return None

    def text(key: str) -> str | None:
        value = _get(body, key)
        return value[:200] if isinstance(value, str) and value else None

    return MediaRef(media_id.strip()[:200], mime=text("mime_type"), sha256=text("sha256"), filename=text("filename"),
                    voice=_get(body, "voice") is True)


def _text_of(raw: dict[str, Any], kind: str) -> str | None:
    """The words of a text-like message: typed text, a tapped quick-reply button, a chosen list item; or one line
    saying what a shared location or contact card is (None when it is malformed: it gets the notice)."""
    if kind == "location":
        return _location(raw.get("location"))
    if kind == "contacts":
        return _contacts(raw.get("contacts"))
    if kind == "text":
        body = _get(raw.get("text"), "body")
    elif kind == "button":
        body = _get(raw.get("button"), "text")
    elif kind == "interactive":
        interactive = raw.get("interactive")
        body = _get(_get(interactive, "button_reply"), "title") or _get(_get(interactive, "list_reply"), "title")
    else:
        return None
    return body if isinstance(body, str) else None


#: Longest name, address or phone number kept of a shared location or contact; most contacts listed.
MAX_SHARED_PART = 300
MAX_CONTACTS = 10


def _location(body: Any) -> str | None:
    """``[a place: NAME, ADDRESS (lat, lon)]`` or ``[a location: lat, lon]``; None without valid coordinates."""
    latitude, longitude = _get(body, "latitude"), _get(body, "longitude")
    if isinstance(latitude, bool) or isinstance(longitude, bool) \
            or not isinstance(latitude, (int, float)) or not isinstance(longitude, (int, float)) \
            or not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None
    named = ", ".join(part for part in (_shared(_get(body, "name")), _shared(_get(body, "address"))) if part)
    return location_text(latitude, longitude, named)


def _contacts(cards: Any) -> str | None:
    """``[a contact: NAME, PHONE]`` (several: ``[contacts: ...; ...]``); None when no card has a name or number."""
    shown = []
    for card in cards[:MAX_CONTACTS] if isinstance(cards, list) else []:
        name = _shared(_get(_get(card, "name"), "formatted_name"))
        phones = [_shared(_get(p, "phone")) for p in (_get(card, "phones") or [])[:3] if isinstance(p, dict)]
        said = ", ".join(part for part in (name, *phones) if part)
        if said:
            shown.append(said)
    if not shown:
        return None
    return f"[a contact: {shown[0]}]" if len(shown) == 1 else f"[contacts: {'; '.join(shown)}]"


def _shared(value: Any) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text if len(text) <= MAX_SHARED_PART else text[:MAX_SHARED_PART - 1] + "…"


def _status(raw: Any, found: Delivery) -> Status | None:
    """One status entry; whatever in it is malformed costs that entry (or its error list), never the delivery."""
    if not isinstance(raw, dict) or not isinstance(raw.get("status"), str) or not isinstance(raw.get("id"), str):
        found.problems.append("a status without id or status")
        return None
    errors = []
    listed = raw.get("errors")
    if listed is not None and not isinstance(listed, list):
        found.problems.append("a status whose errors are not a list")
        listed = None
    for error in listed or []:
        if isinstance(error, dict):
            code = error.get("code")
            title = error.get("title") or error.get("message") or ""
            errors.append((code if isinstance(code, int) and not isinstance(code, bool) else None,
                           title[:200] if isinstance(title, str) else ""))
    status = raw["status"] if raw["status"] in KNOWN_STATUSES else "other"
    return Status(raw["id"][:200], status, str(raw.get("recipient_id") or "")[:64], tuple(errors))


def _profile_names(contacts: Any) -> dict[str, str]:
    names = {}
    for contact in contacts if isinstance(contacts, list) else []:
        name = _get(_get(contact, "profile"), "name")
        if isinstance(contact, dict) and isinstance(contact.get("wa_id"), str) and isinstance(name, str):
            names[contact["wa_id"]] = name
    return names


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _list(value: Any, where: str, found: Delivery, *, optional: bool = False) -> list[Any]:
    if value is None and optional:
        return []
    if not isinstance(value, list):
        found.problems.append(f"{where} is not a list")
        return []
    return value
