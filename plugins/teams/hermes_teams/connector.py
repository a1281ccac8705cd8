"""The Bot Connector REST API, through the Teams SDK's own client (``microsoft_teams.api``).

``ConversationActivityClient`` sends ``POST {serviceUrl}/v3/conversations/{id}/activities``
and ``PUT …/activities/{activityId}`` with the SDK's activity models
(``MessageActivityInput``, ``TypingActivityInput`` and their streaming
helpers), over the SDK's httpx client with the bot token as a callable (so
a refreshed token is picked up per call). One httpx client serves every
service URL (Teams has one per region). The SDK raises
``httpx.HTTPStatusError`` on any 4xx/5xx; :func:`~.errors.translate` turns
every failure into what the core understands.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import DeliveryError

from .errors import translate
from .token import BotToken


class Connector:
    """Sends and updates activities in conversations, with the bot's token."""

    def __init__(self, token: BotToken, timeout: float) -> None:
        self._token = token
        self._timeout = timeout
        self._http: Any = None

    def _client(self, service_url: str) -> Any:
        from microsoft_teams.api.clients.conversation.activity import ConversationActivityClient
        from microsoft_teams.common.http import Client, ClientOptions

        if self._http is None:
            self._http = Client(ClientOptions(token=self._token.get, timeout=self._timeout))
        return ConversationActivityClient(service_url, self._http)

    async def create(self, service_url: str, conversation_id: str, activity: Any, *, what: str,
                     streaming: bool = False) -> str:
        """POST the activity; the id Teams gave it ("" for a typing activity, which gets none)."""
        try:
            sent = await self._client(service_url).create(conversation_id, activity)
        except Exception as exc:
            raise self._failed(exc, what, streaming) from None
        return "" if sent.id == "DO_NOT_USE_PLACEHOLDER_ID" else str(sent.id)

    async def update(self, service_url: str, conversation_id: str, activity_id: str, activity: Any, *,
                     what: str) -> None:
        """PUT the whole activity over the one with ``activity_id``."""
        try:
            await self._client(service_url).update(conversation_id, activity_id, activity)
        except Exception as exc:
            raise self._failed(exc, what, False) from None

    def _failed(self, exc: BaseException, what: str, streaming: bool) -> DeliveryError:
        error = translate(exc, what, streaming=streaming)
        if "HTTP 401" in str(error):
            self._token.forget()
        return error

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.http.aclose()
