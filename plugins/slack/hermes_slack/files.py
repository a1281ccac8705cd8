"""Attachments on Slack: slack_sdk's ``files_upload_v2`` into the reply's thread, the caption as its comment.

``files_upload_v2`` makes three requests: ``files.getUploadURLExternal``
(file name and length) → a POST of the bytes to the returned upload URL →
``files.completeUploadExternal`` (``channel_id``, ``thread_ts``,
``initial_comment``), which is the one that shares the file, so the only
one whose effect a person can see. How a failure reaches the core depends
on the step it happened in, which :func:`web_client_class` records (the SDK's
exception does not say):

* a lost answer (timeout, broken connection) in the first two steps is
  retryable and never ``maybe_delivered``: nothing is shared yet, and the
  file uploaded without completion is never shown;
* the same in ``files.completeUploadExternal`` may have shared the file:
  ``maybe_delivered``, the core never sends it again;
* 429s and Slack's errors are translated as for text (:mod:`.errors`); both
  ``files.*`` methods are limited per workspace (Tier 4), so a 429 there
  holds every chat ("bot" scope).

Slack takes any file type up to 1 GB (``MAX_V2_FILE_SIZE`` in slack_sdk,
which refuses more itself). Images, videos and audio show inline; any other
file as a download. The returned :class:`MessageRef` carries the file id:
``files.completeUploadExternal`` does not say which message shows it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import re
from typing import Any

from hermes_gateway import DeliveryError, Media, MediaLimits, MessageRef, Stream

from .errors import error_code, translate

#: slack_sdk's own limit for files_upload_v2 (``slack_sdk.web.internal_utils.MAX_V2_FILE_SIZE``), Slack's 1 GB.
MAX_FILE_BYTES = 1024 * 1024 * 1024
#: ``initial_comment`` is a message text: the plugin keeps it within what it sends as one message.
MAX_COMMENT_CHARS = 4000
LIMITS = MediaLimits(kinds=frozenset({"image", "video", "audio", "document"}),
                     max_bytes={"default": MAX_FILE_BYTES},
                     caption_length=MAX_COMMENT_CHARS, urls=False)

GET_URL = "files.getUploadURLExternal"
UPLOAD = "upload"
COMPLETE = "files.completeUploadExternal"

#: The steps of the files_upload_v2 call running in this task, in order (None outside one).
_steps: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("hermes_slack_upload_steps", default=None)


def web_client_class() -> type:
    """``AsyncWebClient`` that notes each Web API method and upload it starts, for the current upload only.

    Imported on first use, so the plugin still imports without slack_sdk (ImportError then).
    """
    from slack_sdk.web.async_client import AsyncWebClient

    return _noting(AsyncWebClient)


@functools.lru_cache(maxsize=2)
def _noting(base: type) -> type:
    class StepNotingWebClient(base):  # type: ignore[misc, valid-type]
        async def api_call(self, api_method: str, **kwargs: Any) -> Any:
            steps = _steps.get()
            if steps is not None:
                steps.append(api_method)
            return await super().api_call(api_method, **kwargs)

        async def _upload_file(self, **kwargs: Any) -> Any:
            steps = _steps.get()
            if steps is not None:
                steps.append(UPLOAD)
            return await super()._upload_file(**kwargs)

    return StepNotingWebClient


async def upload(client: Any, stream: Stream, media: Media) -> MessageRef:
    """Share ``media`` in the reply's channel (and thread), its caption as the comment; one attempt."""
    if media.path is None:
        raise DeliveryError(f"slack uploads files only, not {media.filename!r} without a path", retryable=False)
    data = await asyncio.to_thread(media.read)
    steps: list[str] = []
    token = _steps.set(steps)
    try:
        answer = await client.files_upload_v2(
            file=data, filename=media.filename, title=media.filename, channel=stream.chat_id,
            thread_ts=stream.thread_id or None, initial_comment=media.caption or None)
    except Exception as exc:
        raise failure(exc, steps[-1] if steps else GET_URL) from None
    finally:
        _steps.reset(token)
    file = answer.get("file") or (answer.get("files") or [{}])[0]
    return MessageRef(stream.chat_id, str(file.get("id") or ""), stream.thread_id)


def failure(exc: BaseException, step: str) -> DeliveryError:
    """The core's view of a files_upload_v2 that failed in ``step``."""
    if step == UPLOAD and not isinstance(exc, asyncio.TimeoutError) and type(exc).__name__ == "SlackRequestError":
        # slack_sdk says "Failed to upload a file (status: 500, body: ...)": the upload server's trouble
        match = re.search(r"status: (\d{3})", str(exc))
        status = int(match.group(1)) if match else 0
        return DeliveryError(f"slack file upload: HTTP {status or '?'} from the upload URL",
                             retryable=status >= 500 or status == 429)
    error = translate(exc, step)
    error.slack_code = error_code(exc)  # type: ignore[attr-defined]
    if error.maybe_delivered and step != COMPLETE:
        # nothing is shared before files.completeUploadExternal: safe to start again
        again = DeliveryError(f"{error} (before the file was shared)", retryable=True)
        again.slack_code = error.slack_code  # type: ignore[attr-defined]
        return again
    return error
