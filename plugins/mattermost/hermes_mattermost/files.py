"""Files: a person's files as lazy ``Attachment`` s (``GET /api/v4/files/{id}``), a tool's files uploaded.

In: a post's ``file_ids``, described by ``metadata.files`` (name, size,
``mime_type``), become attachments whose ``fetch`` downloads only when the
core asks (never for a message it drops), streamed, within the declared
size and :data:`MAX_DOWNLOAD_BYTES`, with the bot token; a failure is a
``FetchError`` naming the file, never the URL.

Out: ``POST /api/v4/files`` (multipart ``channel_id`` + ``files``) gives a
file id; a post with ``file_ids`` (and the caption as its message) in the
reply's thread shows it. Only that post makes the file visible, so a
timeout on the upload is retried and a timeout on the post is "maybe
delivered" (the core never repeats it).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import aiohttp

from hermes_gateway import Attachment, DeliveryError, Media, MediaLimits, MessageRef, Stream, stream_download

#: Mattermost's default ``FileSettings.MaxFileSize`` (100 MiB): the most it accepts, and the most read back.
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_DOWNLOAD_BYTES = MAX_FILE_BYTES
#: At most this many files of one post are handed on (Mattermost allows 5 per post anyway).
MAX_FILES_PER_POST = 10
LIMITS = MediaLimits(kinds=frozenset({"image", "document", "audio", "video"}),
                     max_bytes={"default": MAX_FILE_BYTES}, caption_length=16383)


class Files:
    """Downloads for one bot: the API's session (it carries the token), the server's URL."""

    def __init__(self, session: Callable[[], aiohttp.ClientSession], api: str) -> None:
        self._session = session
        self.api = api

    def fetch(self, file_id: str, name: str, size: int | None) -> Any:
        return stream_download(self._session(), f"{self.api}/files/{file_id}", what=f"mattermost: the file {name!r}",
                               declared_size=size, max_bytes=MAX_DOWNLOAD_BYTES,
                               status_notes={404: "it was deleted", 403: "the bot may not read it"},
                               timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=30))


def _kind(mime: str) -> Literal["image", "audio", "video", "document"]:
    top = mime.split("/", 1)[0]
    if top == "image":
        return "image"
    if top == "audio":
        return "audio"
    if top == "video":
        return "video"
    return "document"


def attachments_of(post: dict[str, Any], files: Files | None) -> tuple[Attachment, ...]:
    """The post's files as attachments, nothing downloaded."""
    ids = post.get("file_ids") or []
    if files is None or not isinstance(ids, list):
        return ()
    described: dict[str, dict[str, Any]] = {}
    metadata = post.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("files"), list):
        described = {str(f.get("id")): f for f in metadata["files"] if isinstance(f, dict)}
    found = []
    for file_id in ids[:MAX_FILES_PER_POST]:
        if not isinstance(file_id, str) or not file_id.isalnum() or len(file_id) > 64:
            continue
        info = described.get(file_id, {})
        name = str(info.get("name") or "file")[:200]
        mime = str(info.get("mime_type") or "application/octet-stream").split(";")[0].strip().lower()[:100]
        size = info.get("size") if isinstance(info.get("size"), int) and info["size"] >= 0 else None
        found.append(Attachment(_kind(mime), _fetcher(files, file_id, name, size), mime=mime, size=size,
                                filename=name))
    return tuple(found)


def _fetcher(files: Files, file_id: str, name: str, size: int | None) -> Callable[[], Any]:
    return lambda: files.fetch(file_id, name, size)


async def upload(api: Any, stream: Stream, media: Media) -> MessageRef:
    """The file into the chat (its thread), with the caption as the post's message."""
    form = aiohttp.FormData()
    form.add_field("channel_id", stream.chat_id)
    form.add_field("files", media.read(), filename=media.filename or "file",
                   content_type=media.mime or "application/octet-stream")
    answer = await api.call("POST", "/files", "files upload", data=form)
    infos = (answer or {}).get("file_infos") if isinstance(answer, dict) else None
    if not infos or not isinstance(infos[0], dict) or not infos[0].get("id"):
        raise DeliveryError("mattermost files upload: the answer named no file", retryable=True)
    body: dict[str, Any] = {"channel_id": stream.chat_id, "message": media.caption or "",
                            "file_ids": [str(infos[0]["id"])]}
    if stream.thread_id:
        body["root_id"] = stream.thread_id
    post = await api.call("POST", "/posts", "create post (file)", json_body=body)
    return MessageRef(stream.chat_id, str(post["id"]), stream.thread_id)
