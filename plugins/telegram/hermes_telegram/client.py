"""The running Telegram client: one bot, built per gateway from ``platforms.telegram``.

The gateway (and ``hermes-gateway ask``, and the test kit) builds one
:class:`TelegramClient` per run with the parsed :class:`TelegramSettings`
and a :class:`~hermes_gateway.PlatformContext`; :meth:`start` checks the
token and begins receiving (long polling, or ``setWebhook`` with the route
mounted when the client was built), :meth:`stop` ends receiving while
replies still being written go out, :meth:`close` closes the bot's
connections. The stream methods (``on_delta`` ...) serve this gateway's
replies. Nothing is shared between two clients: two gateways in one
process run two bots.

Markdown is sent as text + ``entities`` (:mod:`.formatting`), never with
``parse_mode``: a reply streamed word by word is full of half-open
markdown, and Telegram rejects a whole MarkdownV2 message over one
unbalanced ``*``; entities cannot fail to parse. python-telegram-bot and
markdown-it-py are imported lazily, so a gateway without them installed
still starts (and says why Telegram is off).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from hermes_gateway import (ConfigError, DeliveryError, Incoming, Media, MessageRef, PlatformClient,
                            PlatformContext, RateLimited, Stream, split_markdown, utf16_length)

from . import drafts, media as attachments
from .inbound_media import FileDownloads
from .errors import is_gone, is_not_modified, is_too_long, message_vanished, translate
from .measure import keep_whole_ranges
from .polling import ALLOWED_UPDATES, Poller
from .redaction import protect_token, scrub
from .settings import TRANSPORTS, TelegramSettings
from .transport import MAX_IN_FLIGHT, bot_request  # noqa: F401  (MAX_IN_FLIGHT: where tests look for it)

if TYPE_CHECKING:
    from .formatting import Entity

log = logging.getLogger(__name__)

NAME = "telegram"


class TelegramClient(PlatformClient):
    """Sends, edits and receives Telegram messages for one bot, for one gateway."""

    settings: TelegramSettings

    def __init__(self, settings: TelegramSettings, context: PlatformContext) -> None:
        """No I/O here: the settings checked against the streaming config, the webhook route mounted."""
        super().__init__(settings, context)
        transport = context.streaming_transport
        if transport is not None and transport not in TRANSPORTS:
            raise ConfigError(context.source, f"streaming.{NAME}.transport",
                              f"one of {', '.join(TRANSPORTS)}, got {transport!r}")
        protect_token(settings.token)
        #: Seconds one upload may take (on_media); tests shorten it to meet a timeout quickly.
        self.upload_timeout = attachments.UPLOAD_TIMEOUT
        self._bot: Any = None
        self._http: Any = None
        #: The files people send, as attachments downloaded on the core's demand (:mod:`.inbound_media`).
        self.files = FileDownloads(lambda: self.bot, self._file_session)
        self._poller: Poller | None = None
        #: Groups that became supergroups: old chat id -> new chat id (Telegram's ChatMigrated).
        self.migrated: dict[str, str] = {}
        from .choices import CallbackAnswers

        #: Presses of approval buttons (``callback_query``), handed to the core (:mod:`.choices`).
        self.callbacks = CallbackAnswers(context)
        from .albums import Albums

        #: The parts of an album a person sends, handed to the core as one message (:mod:`.albums`).
        self.albums = Albums(self._receive)
        if settings.webhook:  # a polling bot mounts nothing, so it does not make the gateway open a listener
            from .webhook import PATH, make_handler

            context.add_route("POST", PATH, make_handler(lambda: settings.webhook_secret, lambda: self.bot,
                                                         self._receive, lambda: self.context.accepting,
                                                         self.files.attachments, self.callbacks.take,
                                                         self.albums))

    # ---------------------------------------------------------------- the bot

    @property
    def bot(self) -> Any:
        """The ``telegram.Bot``, built on first use."""
        if self._bot is None:
            try:
                from telegram import Bot
            except ImportError:
                raise DeliveryError("telegram needs python-telegram-bot: pip install hermes-telegram",
                                    retryable=False) from None
            self._bot = Bot(self.settings.token, base_url=self.settings.base_url,
                            base_file_url=self.settings.file_url, request=bot_request())
        return self._bot

    async def warm_up(self) -> None:
        """For a one-shot command (``ask``, ``send``): import python-telegram-bot and open the bot's connections now,
        so the first budgeted call reaches Telegram when the core charged the chat for it."""
        await self.bot.initialize()

    def _file_session(self) -> Any:
        """The aiohttp session files are downloaded with (PTB's would read each file whole into memory)."""
        if self._http is None or self._http.closed:
            import aiohttp

            # no total timeout: a 20 MB file on a slow link may take minutes; a stalled one ends after 60 s
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, connect=10, sock_read=60))
        return self._http

    def _receive(self, incoming: Incoming) -> Any:
        """A received message to the core (looked up per message: the context is the gateway's word)."""
        return self.context.receive(incoming)

    # ---------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Check the token (``getMe``), then ``setWebhook`` or start long polling."""
        source = self.context.source
        try:
            bot = self.bot
        except DeliveryError as exc:
            raise ConfigError(source, "platforms.telegram", str(exc)) from None
        from telegram import error as tg  # importable now: building the bot needed it

        try:
            await bot.initialize()
        except tg.InvalidToken:
            raise ConfigError(source, "platforms.telegram.token",
                              "a token Telegram accepts (getMe answered Unauthorized)") from None
        except tg.TelegramError as exc:  # the network may come back: polling retries
            log.warning("telegram: getMe failed (%s); polling will keep trying", scrub(f"{type(exc).__name__}: {exc}"))
        else:
            log.info("telegram: receiving messages as @%s", bot.username)
        if self.settings.webhook:
            await self._set_webhook(bot, source)
            return
        try:  # a webhook left set (by an earlier webhook run) makes getUpdates answer 409 Conflict
            await bot.delete_webhook(drop_pending_updates=False)
        except tg.TelegramError as exc:
            log.warning("telegram: deleteWebhook failed (%s); polling anyway", scrub(f"{type(exc).__name__}: {exc}"))
        self._poller = Poller(bot, self._receive, poll_timeout=self.settings.poll_timeout,
                              attach=self.files.attachments, on_update=self.callbacks.take, context=self.context,
                              albums=self.albums)
        self._poller.start()

    async def _set_webhook(self, bot: Any, source: str) -> None:
        """Tell Telegram where to post updates, with the secret it must send back."""
        from telegram import error as tg

        assert self.settings.webhook_url is not None
        try:
            await bot.set_webhook(self.settings.webhook_url, secret_token=self.settings.webhook_secret,
                                  allowed_updates=ALLOWED_UPDATES)
        except tg.BadRequest as exc:  # Telegram refused the URL: a config mistake
            raise ConfigError(source, "platforms.telegram.webhook_url",
                              f"a URL Telegram accepts ({scrub(str(exc))})") from None
        except tg.TelegramError as exc:
            raise ConfigError(source, "platforms.telegram", f"setWebhook failed: {scrub(type(exc).__name__)}: "
                                                            f"{scrub(str(exc))}") from None
        log.info("telegram: receiving messages by webhook at %s", scrub(self.settings.webhook_url))
        self.context.report_connected()  # Telegram accepted the URL: it posts updates there from now on

    async def stop(self) -> None:
        """Stop polling and confirm what was received; a webhook's route answers 503 from now on."""
        poller, self._poller = self._poller, None
        if poller is not None:
            await poller.stop()  # an album still arriving is left to Telegram to send again
        else:
            self.albums.hand_over_all()  # by webhook each part was answered 200: the core takes what came
        await self.callbacks.drain()

    async def close(self) -> None:
        """Close the bot's connections (after the last reply)."""
        http, self._http = self._http, None
        if http is not None and not http.closed:
            await http.close()
        bot, self._bot = self._bot, None
        if bot is not None:
            try:
                await bot.shutdown()
            except Exception as exc:
                log.warning("telegram: closing the bot's connections failed: %s", scrub(str(exc)))

    # ---------------------------------------------------------------- approval buttons (issue 25)

    async def offer_choice(self, stream: Stream, choice: Any) -> MessageRef:
        """The question with an inline keyboard (:mod:`.choices`)."""
        from .choices import offer_choice

        return await offer_choice(self, stream, choice)

    async def close_choice(self, stream: Stream, message: MessageRef, text: str) -> None:
        """The question's message now says how it ended; its buttons are gone."""
        from .choices import close_choice

        await close_choice(self, stream, message, text)

    # ---------------------------------------------------------------- stream methods

    def supports_edit(self, stream: Stream) -> bool:
        return True

    # ---------------------------------------------------------------- status reactions (issue 24)

    @property
    def reaction_emoji(self) -> frozenset[str]:
        """The fixed list of emoji a bot may react with (``telegram.constants.ReactionEmoji``); the core
        refuses any other in ``reactions:`` at start (PTB would send it as a custom emoji id: a 400)."""
        from .reactions import reaction_emoji

        return reaction_emoji()

    async def react(self, chat_id: str, message_id: str, emoji: str, thread_id: str | None = None) -> None:
        """``setMessageReaction``: the bot's one reaction on the message becomes ``emoji`` (message ids are
        per chat, so a forum topic's ``thread_id`` is not needed)."""
        from .reactions import set_reaction

        await set_reaction(self, chat_id, message_id, emoji)

    async def on_stream_start(self, stream: Stream) -> None:
        await self._into_chat(stream, "sendChatAction", lambda chat_id: self.bot.send_chat_action(
            chat_id, "typing", message_thread_id=_thread(stream)))

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if drafts.wanted(stream, self.settings) and (message is None or drafts.is_draft(message)):
            return await self._draft_frame(stream, message, text)
        return await self._show(stream, drafts.real(stream, message), text, final=False, draft=message)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        return await self._show(stream, drafts.real(stream, message), text, final=True, draft=message)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file as a Telegram photo, video, audio or document, after the reply's text (:mod:`.media`)."""
        return await attachments.send(self, stream, media)

    # ---------------------------------------------------------------- native drafts

    def free_previews(self, stream: Stream) -> bool:
        """Whether this reply's previews cost the chat nothing: draft frames, with ``charge_drafts: false``.

        The core asks the client (its answer depends on this gateway's settings), not ``Platform.free_previews``.
        """
        return not self.settings.charge_drafts and drafts.wanted(stream, self.settings)

    async def _draft_frame(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """One ``sendMessageDraft`` frame; a refused draft switches this reply to edits without losing the frame."""
        from .formatting import render

        ref = message or drafts.new_ref(stream)
        body, entities = render(drafts.without_cursor(text, stream.settings.cursor))
        thread = _thread(stream)
        try:
            await self._into_chat(stream, "sendMessageDraft", lambda chat_id: self._with_entities(
                lambda t, e: self.bot.send_message_draft(int(chat_id), drafts.draft_id(ref), t,
                                                         message_thread_id=thread, entities=e),
                body, entities, text))
        except RateLimited:
            if drafts.rate_limited(stream):
                log.info("telegram: %s: drafts keep meeting flood control; edits for the rest of the reply",
                         stream.chat_id)
            raise
        except DeliveryError as exc:
            if exc.retryable or stream.state.get("gone"):
                raise
            drafts.refused(stream)
            log.info("telegram: %s: draft refused (%s); edits for the rest of the reply", stream.chat_id, exc)
            return await self._show(stream, None, text, final=False, draft=message)
        return ref

    # ---------------------------------------------------------------- showing text

    async def _show(self, stream: Stream, message: MessageRef | None, text: str, *, final: bool,
                    draft: MessageRef | None = None) -> MessageRef:
        """Send ``text`` as a new message, or edit ``message`` to read it: Markdown rendered as entities.

        ``draft``: the core knows this message by its draft ref; the real message that replaces the
        draft is remembered under it (so later calls edit it, and the final text is sent once), and
        the draft ref is what the core gets back.
        Only the final text is split further when the server says "message is too long" (a server
        with a lower limit than Telegram's); a preview that is too long stops previews instead.
        """
        try:
            ref = await self._show_one(stream, message, text, final=final)
        except DeliveryError as exc:
            if not final or not is_too_long(exc):
                raise
            ref = await self._split_final(stream, message, text)
        if drafts.is_draft(draft):
            drafts.remember(stream, draft, ref)
            return draft
        return ref

    async def _split_final(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        log.info("telegram: %s/%s: the server refused the final text as too long; splitting it",
                 stream.chat_id, message.message_id if message else "new")
        return await self._show_in_parts(stream, message, text, depth=0)

    async def _show_one(self, stream: Stream, message: MessageRef | None, text: str, *,
                        final: bool = False) -> MessageRef:
        """One message's text, in one call. ``final``: the core's last word for that message.

        A message that is not there any more (deleted, left behind in a group that moved) is
        replaced here when it is the reply's newest message: its whole text goes out as a new
        message (in the new chat, after a move) and later calls for it edit that one. Any other
        failed edit fails the call: the core decides (retry, keep what it shows, send anew).
        """
        self.bot  # noqa: B018 - no SDK: the DeliveryError that says how to fix it
        from .formatting import render

        replaced: dict[str, MessageRef] = stream.state.setdefault("replaced", {})
        sent: list[str] = stream.state.setdefault("sent", [])
        original = message
        while message is not None and _key(message) in replaced:
            message = replaced[_key(message)]
        body, entities = render(text, stream.settings.cursor)
        if message is None:
            chat_id, new = await self._into_chat(stream, "sendMessage", lambda chat_id: self._with_entities(
                lambda t, e: _post(self.bot, "sendMessage", {
                    "chat_id": chat_id, "text": t, "entities": e, "message_thread_id": _thread(stream),
                    "reply_parameters": _quote_json(stream)}), body, entities, text, as_json=True))
            stream.state["quoted"] = True
            ref = MessageRef(str(chat_id), str(new["message_id"]), stream.thread_id)
            sent.append(_key(ref))
            return ref
        try:
            await self._with_entities(lambda t, e: _post(self.bot, "editMessageText", {
                "chat_id": message.chat_id, "message_id": int(message.message_id), "text": t, "entities": e}),
                body, entities, text, as_json=True)
        except Exception as exc:
            if is_not_modified(exc):
                return original or message  # it already reads exactly this: success
            error = self._failed(stream, exc, "editMessageText")
            if not message_vanished(exc) or stream.state.get("gone"):
                raise error from None
            if sent and sent[-1] == _key(message):  # the newest: nothing below it, so replace it here
                log.info("telegram: %s: message %s cannot be edited any more (%s); its text goes out anew",
                         stream.chat_id, message.message_id, error)
                replaced[_key(message)] = await self._show_one(stream, None, text, final=final)
                return original or message
            raise error from None
        return original or message

    async def _show_in_parts(self, stream: Stream, message: MessageRef | None, text: str, *,
                             depth: int) -> MessageRef:
        """``text`` in two (or more) messages: the first replaces ``message``, the rest follow it."""
        parts = split_markdown(text, max(16, utf16_length(text) // 2 + 8), measure=utf16_length,
                               keep_whole=keep_whole_ranges)
        first: MessageRef | None = None
        for index, part in enumerate(parts):
            target = message if index == 0 else None
            try:
                ref = await self._show_one(stream, target, part, final=True)
            except DeliveryError as exc:
                if not is_too_long(exc) or depth >= 4:
                    raise
                ref = await self._show_in_parts(stream, target, part, depth=depth + 1)
            first = first or ref
        assert first is not None
        return first

    async def _with_entities(self, call: Callable[[str, Any], Awaitable[Any]], body: str,
                             entities: list[Entity], markdown: str, *, as_json: bool = False) -> Any:
        """Send with entities; if Telegram refuses them, the same call once more as plain text.

        ``as_json``: the entities as plain dicts (for :func:`_post`), else PTB's ``MessageEntity`` objects.
        """
        from telegram import MessageEntity, error as tg

        if not entities:
            return await call(body, None)
        objects: list[Any] = ([e.to_dict() for e in entities] if as_json else
                              [MessageEntity(e.type, e.offset, e.length, url=e.url, language=e.language)
                               for e in entities])
        try:
            return await call(body, objects)
        except tg.BadRequest as exc:
            if "entit" not in str(exc).lower():
                raise
            log.warning("telegram: entities refused (%s); sending plain text", scrub(str(exc))[:200])
            return await call(markdown, None)

    # ---------------------------------------------------------------- one chat's calls

    def chat_for(self, chat_id: str) -> str:
        """Where to send for ``chat_id``: a group that became a supergroup lives on under a new id."""
        while chat_id in self.migrated:
            chat_id = self.migrated[chat_id]
        return chat_id

    async def _into_chat(self, stream: Stream, what: str,
                         call: Callable[[str], Awaitable[Any]]) -> tuple[str, Any]:
        """One call into the stream's chat, following a migration once; returns (chat id used, result).

        A chat the bot can no longer reach (blocked, removed, not found) ends the reply: the rest of
        its calls fail at once, without reaching Telegram.
        """
        self.bot  # noqa: B018 - no SDK: the DeliveryError that says how to fix it
        from telegram import error as tg

        gone = stream.state.get("gone")
        if gone:
            raise DeliveryError(gone, retryable=False)
        for attempt in (1, 2):
            chat_id = self.chat_for(stream.chat_id)
            try:
                return chat_id, await call(chat_id)
            except tg.ChatMigrated as exc:
                if attempt == 2:
                    raise self._failed(stream, exc, what) from None
                self._follow(chat_id, str(exc.new_chat_id))
            except DeliveryError:
                raise
            except Exception as exc:
                raise self._failed(stream, exc, what) from None
        raise AssertionError("unreachable")

    def _follow(self, old: str, new: str) -> None:
        self.migrated[old] = new
        log.info("telegram: group %s became supergroup %s; replies go there now", old, new)

    def _failed(self, stream: Stream, exc: BaseException, what: str) -> DeliveryError:
        from telegram import error as tg

        if isinstance(exc, tg.ChatMigrated):  # an edit in the old group: the core sends the text anew
            self._follow(str(stream.chat_id), str(exc.new_chat_id))
        error = translate(exc, what)
        if is_gone(exc):
            stream.state["gone"] = str(error)
        return error



async def _post(bot: Any, method: str, params: dict[str, Any]) -> Any:
    """One Bot API call of a reply's text, its answer as Telegram sent it (a dict, or True).

    ``Bot.send_message`` / ``edit_message_text`` build a whole ``telegram.Message`` from every answer (~120 µs
    of CPU each: a reply's previews and its final text are the gateway's most frequent calls, thousands at
    once with many replies, issue 39), and nothing here reads more than the new message's id. The plugin's
    transport posts the fields itself (``BotRequest.post_text``, :mod:`.transport` says why) with PTB's
    errors; a bot built on another transport goes through ``Bot._post``, where those methods send from (the
    same parameters, defaults and errors): python-telegram-bot is pinned to one major version (22).
    ``params``: strings, numbers and plain JSON values (entity and reply-parameter dicts), which both accept.
    """
    post_text = getattr(bot.request, "post_text", None)
    if post_text is None:
        return await bot._post(method, params)
    return await post_text(f"{bot.base_url}/{method}", params)


def _quote(stream: Stream) -> Any:
    """In a group, the reply's first message quotes the question, so everyone sees whom it answers."""
    quoted = _quote_json(stream)
    if quoted is None:
        return None
    from telegram import ReplyParameters

    return ReplyParameters(**quoted)


def _quote_json(stream: Stream) -> dict[str, Any] | None:
    """:func:`_quote` as the plain JSON value :func:`_post` sends (PTB's ``ReplyParameters.to_dict()``)."""
    if stream.chat_kind not in ("group", "supergroup") or not stream.reply_to or stream.state.get("quoted"):
        return None
    try:
        message_id = int(stream.reply_to)
    except ValueError:
        return None
    return {"message_id": message_id, "allow_sending_without_reply": True}


def _key(message: MessageRef) -> str:
    """Message ids are per chat: after a group moves, the new chat numbers its messages from 1 again."""
    return f"{message.chat_id}:{message.message_id}"


def _thread(stream: Stream) -> int | None:
    """Forum topics: ``message_thread_id`` must be the topic's number."""
    if stream.thread_id in (None, ""):
        return None
    try:
        return int(stream.thread_id)  # type: ignore[arg-type]
    except ValueError:
        return None
