"""The Discord emulator's file uploads: ``POST /channels/{id}/messages`` as ``multipart/form-data``.

Kept apart from :mod:`.emulator` (text, buckets, gateway). The wire shape is
what discord.py 2.7 sends and what Discord documents ("Uploading Files"):
a ``payload_json`` part (the message JSON, with ``attachments: [{"id": n,
"filename": ...}]``) and one file part per attachment named ``files[n]``.
As strict as Discord where the plugin depends on it:

* a file part under any other name, an attachment entry whose ``id`` has
  no ``files[id]`` part, or no ``payload_json``: 400, code 50035 Invalid
  Form Body; an empty file: 400, 50006 (nothing to send);
* a file over the channel's upload limit (10 MiB in a server without
  boosts, as ``discord.utils.DEFAULT_FILE_SIZE_LIMIT_BYTES``): 413, code
  40005 "Request entity too large", nothing posted;
* ``content`` is optional with a file but at most 2000 characters; the
  message must carry ``allowed_mentions`` none (else a violation).

An accepted upload is a message of its own on the channel's screen,
``[image: qr.png] caption`` (the kind as Discord previews it, by the file
name's extension; ``file`` when it only offers a download), with its bytes
and file name kept (:attr:`EmulatedChannel.uploads`). Buckets, 429s and
injected errors apply as to any message call; :meth:`UploadRules.rate_limit_next`
makes the next upload (only) answer 429, :meth:`UploadRules.stall` makes it
answer late (having taken effect, or not).
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from hermes_gateway.testing import ScreenMessage, SentMedia

if TYPE_CHECKING:
    from .emulator import DiscordEmulator, EmulatedChannel

#: Discord's default per-file limit (servers below boost level 2, DMs): 10 MiB.
DEFAULT_UPLOAD_LIMIT = 10 * 1024 * 1024
#: The most the emulator reads of one request (files plus the JSON part).
MAX_REQUEST_BYTES = 25 * 1024 * 1024 + 1024 * 1024


def shown_kind(filename: str) -> str:
    """How Discord shows an attachment: an inline image/video/audio player by extension, else a file."""
    mime = mimetypes.guess_type(filename)[0] or ""
    major = mime.split("/", 1)[0]
    return major if major in ("image", "video", "audio") else "file"


class UploadRules:
    """The upload side of one :class:`~.emulator.DiscordEmulator` (it owns one of these)."""

    def __init__(self, api: "DiscordEmulator", *, upload_limit: int = DEFAULT_UPLOAD_LIMIT) -> None:
        self.api = api
        self.upload_limit = upload_limit
        #: channel id -> the next uploads' stalls: (seconds to answer late, whether it took effect first)
        self.stalls: dict[str, list[tuple[float, bool]]] = {}
        #: channel id -> retry_after of the 429s the next uploads answer (text calls are not affected)
        self.flood: dict[str, list[float]] = {}

    def rate_limit_next(self, channel_id: str | int, retry_after: float) -> None:
        """The next upload into the channel (not a text call) answers 429 with this ``retry_after``."""
        self.flood.setdefault(str(channel_id), []).append(retry_after)

    def stall(self, channel_id: str | int, seconds: float, *, landed: bool) -> None:
        """The next upload into the channel answers ``seconds`` late (after taking effect when ``landed``)."""
        self.stalls.setdefault(str(channel_id), []).append((seconds, landed))

    async def handle(self, request: web.Request, channel: "EmulatedChannel") -> web.Response:
        """One multipart message create; raises the emulator's ``ApiError`` as Discord answers."""
        from .emulator import MESSAGES_BUCKET, ApiError, _answer

        if (request.content_length or 0) > MAX_REQUEST_BYTES:
            self.api._log(channel, "upload", {}, "Request entity too large")
            raise ApiError(413, 40005, "Request entity too large")
        params, files, problem = await self._read(request)
        now = time.monotonic()
        flood = self.flood.get(channel.id, [])
        if flood:  # through _admit, which keeps the 429's window (a call inside it is a violation)
            channel.scheduled_errors[len(channel.calls)] = ApiError(
                429, 0, "You are being rate limited.", {"retry_after": float(flood.pop(0)), "global": False})
        headers = self.api._admit(channel, "upload", MESSAGES_BUCKET, params, now)
        if channel.denied:
            self.api._log(channel, "upload", params, "Missing Permissions")
            raise ApiError(403, 50013, "Missing Permissions")
        stalls = self.stalls.get(channel.id, [])
        seconds, landed = stalls.pop(0) if stalls else (0.0, True)
        if seconds and not landed:
            self.api._log(channel, "upload", params, "timed out before taking effect")
            await asyncio.sleep(seconds)
            raise ApiError(504, 0, "Gateway Timeout")
        if problem:
            self.api._log(channel, "upload", params, problem)
            raise ApiError(400, 50035, "Invalid Form Body", {"errors": {"files": {"_errors": [{
                "code": "INVALID_FORM_BODY", "message": problem}]}}})
        entries = params.get("attachments") or []
        for _index, (_name, data) in sorted(files.items()):
            if len(data) > self.upload_limit:
                self.api._log(channel, "upload", params, "Request entity too large")
                raise ApiError(413, 40005, "Request entity too large")
            if not data:
                self.api._log(channel, "upload", params, "Cannot send an empty message")
                raise ApiError(400, 50006, "Cannot send an empty message")
        content = params.get("content") or ""
        if content:
            content = self.api._check_content(channel, "upload", params)
        else:
            self.api._check_mentions(channel, "upload", params)
        sent = []
        for entry in entries:
            name, data = files[int(entry["id"])]
            filename = str(entry.get("filename") or name)
            sent.append(SentMedia(shown_kind(filename), filename, content, data,
                                  mimetypes.guess_type(filename)[0] or "application/octet-stream"))
        label = " ".join(f"[{s.kind}: {s.filename}]" for s in sent) + (f" {content}" if content else "")
        message = ScreenMessage(self.api.snowflake(), label, [label], media=sent[0])
        reference = params.get("message_reference")
        if isinstance(reference, dict) and reference.get("message_id"):
            channel.references[message.id] = str(reference["message_id"])
        channel.messages.append(message)
        channel.uploads.extend(sent)
        self.api._log(channel, "upload", params, "ok")
        body = self.api._message_json(channel, message.id, content, self.api.bot_user)
        body["attachments"] = [self._attachment_json(s) for s in sent]
        if seconds:
            await asyncio.sleep(seconds)  # it is posted; the answer comes too late
        return _answer(200, body, headers)

    async def _read(self, request: web.Request) -> tuple[dict[str, Any], dict[int, tuple[str, bytes]], str]:
        """(payload_json, files by index, the first problem with the form or "")."""
        form = await request.post()
        params: dict[str, Any] = {}
        files: dict[int, tuple[str, bytes]] = {}
        problem = ""
        for key, value in form.items():
            if key == "payload_json" and isinstance(value, (str, bytes, bytearray)):  # text/plain or JSON part
                try:
                    params = json.loads(value)
                except ValueError:
                    problem = problem or "payload_json is not JSON"
            elif isinstance(value, web.FileField) and key.startswith("files[") and key.endswith("]") \
                    and key[6:-1].isdigit():
                files[int(key[6:-1])] = (value.filename or "", value.file.read())
            else:
                problem = problem or f"unexpected form field {key!r} (files go in files[n])"
        if not isinstance(params, dict) or "payload_json" not in form:
            problem = problem or "no payload_json"
            params = params if isinstance(params, dict) else {}
        entries = params.get("attachments")
        if not files:
            problem = problem or "no files[n] part"
        elif not isinstance(entries, list) or sorted(int(e.get("id", -1)) for e in entries
                                                     if isinstance(e, dict)) != sorted(files):
            problem = problem or "attachments[].id must name each files[n] part once"
        return params, files, problem

    def _attachment_json(self, sent: SentMedia) -> dict[str, Any]:
        attachment_id = self.api.snowflake()
        url = f"{self.api.api_base_url}/attachments/{attachment_id}/{sent.filename}"
        return {"id": attachment_id, "filename": sent.filename, "size": len(sent.data), "url": url,
                "proxy_url": url, "content_type": sent.mime}
