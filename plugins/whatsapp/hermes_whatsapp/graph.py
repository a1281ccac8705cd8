"""The Graph API calls the plugin makes, over aiohttp: send a text or a media message, upload media, show
typing, look up the number, look up and download a file a user sent.

One ``aiohttp.ClientSession`` per plugin, opened on first use on the running
loop and closed at shutdown. The token goes only into the ``Authorization``
header, never into a URL. Every failure leaves as a ``DeliveryError`` (see
:mod:`.errors`); whether a failed request may have reached Meta is decided
here, because only here is it known whether the request was written.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator

import aiohttp
from hermes_gateway import DeliveryError, stream_download

from .errors import GraphError, PairBackoff, translate
from .redaction import scrub
from .settings import WhatsAppSettings


#: Seconds a download may go without a byte before it is given up.
DOWNLOAD_STALL = 60.0


class GraphClient:
    """Sends from one business phone number."""

    def __init__(self, settings: WhatsAppSettings, pairs: PairBackoff) -> None:
        self.settings = settings
        self.pairs = pairs
        self._session: aiohttp.ClientSession | None = None

    @property
    def messages_url(self) -> str:
        return f"{self.settings.api_base_url}/{self.settings.phone_number_id}/messages"

    @property
    def media_url(self) -> str:
        return f"{self.settings.api_base_url}/{self.settings.phone_number_id}/media"

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            timeout = aiohttp.ClientTimeout(total=self.settings.timeout, connect=min(10.0, self.settings.timeout))
            # trust_env: HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply, as they do to the model's requests
            self._session = aiohttp.ClientSession(
                timeout=timeout, headers={"Authorization": f"Bearer {self.settings.access_token}"}, trust_env=True)
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    # ---------------------------------------------------------------- calls

    async def send_text(self, to: str, body: str, *, quote: str | None = None) -> str:
        """Send ``body`` to the user ``to`` (a wa_id), quoting message ``quote``; returns the new wamid."""
        payload: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
                                   "type": "text", "text": {"body": body, "preview_url": False}}
        if quote:
            payload["context"] = {"message_id": quote}
        answer = await self._post(payload, "send", to)
        self.pairs.passed(to)
        try:
            return str(answer["messages"][0]["id"])
        except (KeyError, IndexError, TypeError):
            # Meta took the message but its answer has no id: it was delivered, we cannot refer to it.
            # Not retryable, not a failure of the text: the core must not send it again.
            raise DeliveryError(scrub(f"whatsapp send: the answer has no message id: {str(answer)[:200]}"),
                                retryable=False, maybe_delivered=True) from None

    async def react(self, to: str, message_id: str, emoji: str) -> None:
        """A reaction message on the user's message ``message_id`` (``emoji`` "" removes the business's)."""
        await self._post({"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
                          "type": "reaction", "reaction": {"message_id": message_id, "emoji": emoji}}, "react", to)

    async def upload_media(self, to: str, data: bytes, mime: str, filename: str) -> str:
        """``POST /{phone_number_id}/media`` (multipart: messaging_product, type, file); returns the media id.

        An upload shows nothing to anyone: if its answer is lost it is safe to upload again (the orphan
        expires at Meta), so a timeout here is retryable and never ``maybe_delivered``.
        """
        form = aiohttp.FormData()
        form.add_field("messaging_product", "whatsapp")
        form.add_field("type", mime)
        form.add_field("file", data, filename=filename, content_type=mime)
        answer = await self._request("POST", self.media_url, None, "media upload", to, form=form, visible=False)
        media_id = answer.get("id")
        if not isinstance(media_id, str) or not media_id:
            raise DeliveryError(scrub(f"whatsapp media upload: the answer has no media id: {str(answer)[:200]}"),
                                retryable=True)
        return media_id

    async def send_media(self, to: str, kind: str, media_id: str, *, caption: str = "", filename: str = "",
                         quote: str | None = None) -> str:
        """A message of type ``kind`` (image/document/video/audio) showing uploaded media; returns its wamid.

        ``caption`` is left out for audio (WhatsApp takes none), ``filename`` is sent for documents only.
        """
        body: dict[str, Any] = {"id": media_id}
        if caption and kind != "audio":
            body["caption"] = caption
        if filename and kind == "document":
            body["filename"] = filename
        payload: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
                                   "type": kind, kind: body}
        if quote:
            payload["context"] = {"message_id": quote}
        answer = await self._post(payload, f"{kind} send", to)
        self.pairs.passed(to)
        try:
            return str(answer["messages"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise DeliveryError(scrub(f"whatsapp {kind} send: the answer has no message id: {str(answer)[:200]}"),
                                retryable=False, maybe_delivered=True) from None

    async def typing(self, to: str, message_id: str) -> None:
        """Mark the user's message read and show *typing…* (cleared by the reply, or after 25 s)."""
        await self._post({"messaging_product": "whatsapp", "status": "read", "message_id": message_id,
                          "typing_indicator": {"type": "text"}}, "typing", to)

    async def mark_read(self, to: str, message_id: str) -> None:
        """Mark the user's message read (blue ticks), without *typing…*: for a reply that came too soon to need it."""
        await self._post({"messaging_product": "whatsapp", "status": "read", "message_id": message_id}, "read", to)

    async def phone_number(self) -> dict[str, Any]:
        """``GET /{phone_number_id}``: checks the token and the id at start-up."""
        url = f"{self.settings.api_base_url}/{self.settings.phone_number_id}"
        return await self._request("GET", url, None, "phone number lookup", "")

    async def media_info(self, media_id: str) -> dict[str, Any]:
        """``GET /{media-id}``: ``{url, mime_type, sha256, file_size, id}`` of a file a user sent (url valid 5 min)."""
        return await self._request("GET", f"{self.settings.api_base_url}/{media_id}", None, "media lookup", "")

    def download(self, url: str, *, what: str, max_bytes: int, declared_size: int | None) -> AsyncIterator[bytes]:
        """``GET url`` with the token, streamed in chunks (:func:`hermes_gateway.stream_download`: never more than
        ``declared_size`` nor ``max_bytes``). No total timeout: a 100 MB document may take minutes; a stalled one
        ends after ``DOWNLOAD_STALL`` seconds without a byte."""
        timeout = aiohttp.ClientTimeout(total=None, connect=min(10.0, self.settings.timeout), sock_read=DOWNLOAD_STALL)
        return stream_download(self._http(), url, what=what, max_bytes=max_bytes, declared_size=declared_size,
                               timeout=timeout)

    async def _post(self, payload: dict[str, Any], what: str, to: str) -> dict[str, Any]:
        return await self._request("POST", self.messages_url, payload, what, to)

    async def _request(self, method: str, url: str, payload: dict[str, Any] | None, what: str,
                       chat_id: str, *, form: aiohttp.FormData | None = None, visible: bool = True) -> dict[str, Any]:
        """One call. ``visible=False``: the call shows nothing to the user even when it lands (a media
        upload), so a lost answer is retryable rather than ``maybe_delivered``."""
        sent = False
        try:
            body_args: dict[str, Any] = {"data": form} if form is not None else {"json": payload}
            async with self._http().request(method, url, **body_args) as response:
                sent = True  # the request is written once the server answers at all
                text = await response.text()
                status = response.status
                retry_after = response.headers.get("Retry-After")
        except asyncio.CancelledError:
            raise
        except aiohttp.ConnectionTimeoutError:
            raise DeliveryError(f"whatsapp {what}: could not connect within the timeout", retryable=True) from None
        except (asyncio.TimeoutError, aiohttp.ServerDisconnectedError) as exc:
            # the request may have reached Meta before the answer was lost: it may have landed
            raise DeliveryError(f"whatsapp {what}: {type(exc).__name__} waiting for the answer", retryable=True,
                                maybe_delivered=visible) from None
        except aiohttp.ClientConnectorError as exc:
            raise DeliveryError(scrub(f"whatsapp {what}: cannot connect: {exc}"), retryable=True) from None
        except aiohttp.ClientError as exc:
            raise DeliveryError(scrub(f"whatsapp {what}: {type(exc).__name__}: {exc}"), retryable=True,
                                maybe_delivered=sent and visible) from None
        try:
            body = json.loads(text) if text else {}
        except ValueError:
            body = None
        if 200 <= status < 300 and isinstance(body, dict):
            return body
        if 200 <= status < 300:
            raise DeliveryError(f"whatsapp {what}: HTTP {status} with a body that is not JSON", retryable=not visible,
                                maybe_delivered=visible)
        raise translate(GraphError.parse(status, body), what, chat_id, self.pairs, retry_after) from None
