"""One running Mattermost client per gateway: REST calls, the websocket, and the stream methods.

The core builds it as ``MattermostClient(settings, context)`` for an enabled
``platforms.mattermost``; building does no I/O and mounts the buttons'
route (only with ``actions_url``). ``start()`` learns who the bot is
(``GET /users/me``: a refused token stops start-up in one line naming
``platforms.mattermost.token``), reads the server's ``MaxPostSize``
(``GET /config/client?format=old``) and starts the websocket
(:mod:`.receiving`); ``stop()`` closes the websocket while replies still
being written go out; ``close()`` closes the REST session.

A reply is one post, edited as it grows (``PUT /posts/{id}/patch``), in
the thread it belongs to (``root_id``). The core splits at the declared
16,383 runes; a server configured with a smaller ``MaxPostSize`` (4,000 on
old databases) gets previews cut to it and a final text continued in more
posts, so nothing is lost.
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_gateway import (ConfigError, Media, MessageRef, PlatformClient, PlatformContext, Stream, split_markdown,
                            markdown_keep_whole)

from . import actions, files
from .api import Api
from .errors import MattermostError
from .inbound import Reader
from .reactions import emoji_name
from .receiving import Receiver
from .settings import MattermostSettings

log = logging.getLogger(__name__)

#: ``model.PostMessageMaxRunesV2``: 65535 / 4 runes (a rune is a code point: Python's ``len``).
MAX_POST_RUNES = 16383


class MattermostClient(PlatformClient):
    """Sends into and receives from one Mattermost bot account, for one gateway."""

    settings: MattermostSettings

    def __init__(self, settings: MattermostSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self.api = Api(settings)
        self.files = files.Files(lambda: self.api.session, settings.api)
        self.reader = Reader(context.platform, thread_replies=settings.thread_replies, files=self.files,
                             has_conversation=context.has_conversation)
        self.receiver = Receiver(settings, context, self.api, self.reader)
        self.actions_key = actions.key_of(settings)
        #: The server's MaxPostSize, once read (the declared limit until then).
        self.max_post = MAX_POST_RUNES
        if settings.actions_url:
            context.add_route("POST", actions.path_of(context.platform),
                              actions.ActionRoute(context, self.actions_key).handle)

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Who the bot is (a refused token stops here), the server's post size, then the websocket."""
        try:
            await self.receiver.identity()
        except MattermostError as exc:
            if exc.status in (401, 403):
                raise ConfigError(self.context.source, "platforms.mattermost.token",
                                  f"a token the server accepts ({exc.error_id or exc.status}); create one under "
                                  "Integrations > Bot Accounts") from None
            log.warning("mattermost: who the bot is is not known yet (%s); the websocket keeps trying", exc)
        except Exception as exc:  # the server is down: the websocket loop keeps trying
            log.warning("mattermost: cannot reach the server yet (%s); the websocket keeps trying", exc)
        await self._read_max_post()
        await self.receiver.start()

    async def warm_up(self) -> None:
        """For ``ask``/``send`` (built, never started): the session and the bot's identity, before the first call."""
        try:
            await self.receiver.identity()
        except Exception as exc:
            log.info("mattermost: warm-up: %s", exc)

    async def stop(self) -> None:
        await self.receiver.stop()

    async def close(self) -> None:
        await self.receiver.stop()
        await self.api.close()

    async def _read_max_post(self) -> None:
        try:
            config = await self.api.call("GET", "/config/client", "config/client", params={"format": "old"})
            size = int(config.get("MaxPostSize", MAX_POST_RUNES))
        except Exception as exc:
            log.info("mattermost: the server's MaxPostSize is unknown (%s); using %d", exc, MAX_POST_RUNES)
            return
        if 0 < size < MAX_POST_RUNES:
            log.info("mattermost: the server takes posts of at most %d runes; longer replies continue in more posts",
                     size)
            self.max_post = size

    # ---------------------------------------------------------------- the stream methods

    def supports_edit(self, stream: Stream) -> bool:
        return True

    async def on_stream_start(self, stream: Stream) -> None:
        """The typing indicator (``POST /users/{id}/typing``), in the reply's thread."""
        me = await self.receiver.identity()
        await self.api.call("POST", f"/users/{me.user_id}/typing", "typing",
                            json_body={"channel_id": stream.chat_id, "parent_id": stream.thread_id or ""})

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if len(text) > self.max_post:  # a preview on a server with a smaller MaxPostSize: its start
            text = text[: self.max_post - 1] + "…"
        return await self._show(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if len(text) <= self.max_post:
            return await self._show(stream, message, text)
        parts = split_markdown(text, self.max_post, keep_whole=markdown_keep_whole)
        ref = await self._show(stream, message, parts[0])
        for part in parts[1:]:
            await self._show(stream, None, part)
        return ref

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        return await files.upload(self.api, stream, media)

    async def _show(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if message is None:
            body: dict[str, Any] = {"channel_id": stream.chat_id, "message": text}
            if stream.thread_id:
                body["root_id"] = stream.thread_id
                self.reader.join(stream.chat_id, stream.thread_id)
            post = await self.api.call("POST", "/posts", "create post", json_body=body)
            return MessageRef(stream.chat_id, str(post["id"]), stream.thread_id)
        await self.api.call("PUT", f"/posts/{message.message_id}/patch", "patch post", json_body={"message": text})
        return message

    # ---------------------------------------------------------------- reactions and buttons

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """The bot's reaction (by Mattermost's emoji name) on the person's post."""
        name = emoji_name(emoji)
        me = await self.receiver.identity()
        await self.api.call("POST", "/reactions", "reaction",
                            json_body={"user_id": me.user_id, "post_id": message_id, "emoji_name": name})

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question with interactive buttons, in the reply's thread (:mod:`.actions`)."""
        return await actions.offer_choice(self, stream, choice)

    async def close_choice(self, stream: Stream, ref: MessageRef, text: str) -> None:
        """The question's post now reads ``text``; its buttons are gone."""
        await actions.close_choice(self, ref, text)
