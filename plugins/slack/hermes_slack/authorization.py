"""What bolt needs to hand each event on, from one ``auth.test``: its ``authorize``.

bolt's own single-workspace authorization calls ``auth.test`` for every
event until its first answer has come back. A busy start (forty messages in
the first second, or the catch-up after a restart) made one call per event to
a method Slack rate-limits, and bolt acknowledged every event whose call was
refused and dropped it: its "authorization failed" answer is a 200, so Slack
never sends the event again (``tests/test_slack_socket_mode.py``: 39 of 40
messages unanswered). Here the start-up's answer (``Receiver._identify``)
serves every event; without one (``auth.test`` failed then), the first event
asks, once, while the others wait for its answer.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable


class BotAuthorization:
    """The bot's ``auth.test`` answer as bolt's ``AuthorizeResult``: known at start-up, or asked for once."""

    def __init__(self, web: Callable[[], Any], on_answer: Callable[[Any], None]) -> None:
        """``web()``: the client's ``AsyncWebClient``; ``on_answer(response)``: told of each answer it gets."""
        self._web = web
        self._on_answer = on_answer
        self._result: Any = None
        self._asking = asyncio.Lock()

    def know(self, response: Any) -> None:
        """``auth.test`` answered ``response`` (at start-up, or here)."""
        from slack_bolt.authorization import AuthorizeResult

        self._result = AuthorizeResult.from_auth_test_response(auth_test_response=response,
                                                               bot_token=self._web().token)

    async def result(self) -> Any:
        """The answer bolt gives each event; a refused ``auth.test`` raises ``SlackApiError`` (bolt drops it)."""
        if self._result is None:
            async with self._asking:
                if self._result is None:
                    response = await self._web().auth_test()
                    self.know(response)
                    self._on_answer(response)
        return self._result

    def for_bolt(self) -> Callable[[], Awaitable[Any]]:
        """``AsyncApp(authorize=...)``: bolt passes a function only the arguments it names (here none)."""

        async def authorize() -> Any:
            return await self.result()

        return authorize
