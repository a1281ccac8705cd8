"""A Slack message's shared files as the core's :class:`~hermes_gateway.Attachment` values.

Slack describes each file in the event's ``files``: ``name``, ``mimetype``,
``size``, ``url_private`` (fetched with the bot token: :mod:`.download`), and
``subtype`` for what Slack recorded itself — ``slack_audio`` (an audio clip:
a voice note, kind ``voice``) and ``slack_video`` (a video clip). The kind
otherwise follows the mime type; what is not an image, audio or video is a
``document``. Nothing is downloaded here.

Some files carry nothing to download: a deleted one (``mode: tombstone``),
one hidden by a free workspace's history limit (``hidden_by_limit``), a
link to another service (``external``: its URL is not Slack's, and the bot
token never goes there), or a Slack Connect file whose details Slack holds
back (``file_access: check_file_info``) and that the receiver looks up with
``files.info`` first (:func:`needs_lookup`). Those are left out; when a
message had only such files and no words, :func:`unusable_only` says so and
the reader answers with a notice instead of silence.
"""

from __future__ import annotations

from typing import Any, Mapping

from hermes_gateway import Attachment

from .download import Downloads

#: Modes of a file object that have no bytes the bot can download.
UNUSABLE_MODES = frozenset({"tombstone", "hidden_by_limit", "external"})
_SUBTYPE_KINDS = {"slack_audio": "voice", "slack_video": "video"}
_MAJOR_KINDS = {"image": "image", "audio": "audio", "video": "video"}


def attachments_of(event: Mapping[str, Any], downloads: Downloads) -> tuple[Attachment, ...]:
    """The downloadable files of a message event, in the order Slack lists them."""
    return tuple(_attachment(f, downloads) for f in _files(event) if usable(f))


def unusable_only(event: Mapping[str, Any]) -> bool:
    """Whether the event has files and none of them can be downloaded."""
    files = _files(event)
    return bool(files) and not any(usable(f) for f in files)


def usable(file: Mapping[str, Any]) -> bool:
    """A file with a private URL to download it from (not deleted, hidden, external or held back)."""
    return (file.get("mode") not in UNUSABLE_MODES and file.get("file_access") != "check_file_info"
            and bool(file.get("url_private") or file.get("url_private_download")))


def needs_lookup(file: Mapping[str, Any]) -> bool:
    """A Slack Connect file whose details Slack sends only through ``files.info``."""
    return file.get("file_access") == "check_file_info" and bool(file.get("id"))


def kind_of(mime: str | None, subtype: str | None = None) -> str:
    """``voice`` for an audio clip, ``video`` for a video clip, else by the mime type's major part, else ``document``."""
    if subtype in _SUBTYPE_KINDS:
        return _SUBTYPE_KINDS[subtype]
    return _MAJOR_KINDS.get((mime or "").split("/", 1)[0], "document")


def _files(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    files = event.get("files") or []
    return [f for f in files if isinstance(f, Mapping)] if isinstance(files, list) else []


def _attachment(file: Mapping[str, Any], downloads: Downloads) -> Attachment:
    filename = str(file.get("name") or file.get("title") or file.get("id") or "file")
    mime = str(file.get("mimetype") or "").split(";", 1)[0].strip() or None
    size = file.get("size")
    size = size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None
    url = str(file.get("url_private") or file.get("url_private_download"))
    return Attachment(kind_of(mime, file.get("subtype")),  # type: ignore[arg-type]
                      downloads.fetcher(url, filename=filename, size=size, mime=mime),
                      mime=mime, size=size, filename=filename)
