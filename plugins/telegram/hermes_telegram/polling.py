"""Receiving messages: long polling ``getUpdates``, each message handed to the core as an ``Incoming``.

That is the whole inbound job of the plugin: the core dedupes, checks
access and mentions, keeps one reply at a time per chat, runs commands and
waits for replies at shutdown. Unlike the stream hooks, the poll loop does
wait and retry: nobody else would.

It also tells the gateway whether Telegram is reachable
(``PlatformContext.report_connected/report_disconnected``): a poll that
answers means connected, a failing one disconnected with its error. While
not known to be connected (at first, and after a failure) it polls with
``timeout=0``, so the answer comes at once rather than after a long poll.

An update python-telegram-bot cannot read (a field its Bot API version
requires that the server left out: a poll option's ``persistent_id`` from
a server older than 9.6; or a hostile one) made the whole ``getUpdates``
fail, and the same update came back at every poll: the bot heard nothing
more, ever. The batch is then read again raw, each update on its own; one
that cannot be read is skipped with one log line (:meth:`Poller._read_alone`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from hermes_gateway import Attachment, Incoming, PlatformContext

from .albums import Albums
from .described import describe, forwarded
from .errors import retry_after_seconds
from .redaction import scrub

log = logging.getLogger(__name__)

Receive = Callable[[Incoming], Any]
#: A message's files as the core's attachments (:meth:`.inbound_media.FileDownloads.attachments`).
Attach = Callable[[Any], tuple[Attachment, ...]]

#: The updates the bot asks for: messages, people's edits of them (the core answers an edited text), and
#: presses of its approval buttons (:mod:`.choices`).
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]

#: Seconds between polls while an album is being received (its updates stay unconfirmed, so a long poll would
#: return at once with them).
ALBUM_POLL = 0.2
#: Seconds between polls after a network failure: doubles up to the cap, resets after a success.
BACKOFF_FIRST = 1.0
BACKOFF_CAP = 30.0


class Unreadable:
    """An update python-telegram-bot could not read: only its id, so the poll moves past it."""

    def __init__(self, update_id: int) -> None:
        self.update_id = update_id


class Poller:
    """One long-polling loop for one bot."""

    def __init__(self, bot: Any, receive: Receive, *, poll_timeout: int = 30, attach: Attach | None = None,
                 on_update: Callable[[Any], bool] | None = None, context: PlatformContext | None = None,
                 albums: Albums | None = None) -> None:
        """``on_update(update)``: a look at each update first; True means it took it (a button press).
        ``context``: where the loop reports whether Telegram answers (the gateway's dashboard).
        ``albums``: where the parts of an album wait for each other (:mod:`.albums`); their updates are not
        confirmed to Telegram until the album is handed over."""
        self.albums = albums
        self.bot = bot
        self.context = context
        self.connected = False
        self.on_update = on_update
        self.receive = receive
        self.attach = attach
        self.poll_timeout = poll_timeout
        self.offset: int | None = None
        self._acked: int | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="telegram-poll")

    async def stop(self) -> None:
        """Stop polling and confirm what was received (the core finishes the replies in flight).

        An album still being received is not confirmed: Telegram sends it again, whole, at the next start.
        """
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        held = self.albums.first_held() if self.albums is not None else None
        if held is not None and self.albums is not None:
            if self.offset is not None:
                self.offset = min(self.offset, held)
            log.info("telegram: %d part(s) of an album still arriving at stop; Telegram will send them again",
                     self.albums.drop_all())
        await self._confirm_received()

    async def _run(self) -> None:
        from telegram import error as tg

        backoff = BACKOFF_FIRST
        while True:
            held = self.albums.first_held() if self.albums is not None else None
            if held is not None:  # an album is being received: its parts stay unconfirmed, the rest is asked soon
                await asyncio.sleep(ALBUM_POLL)
                held = self.albums.first_held() if self.albums is not None else None
            fetch = self.offset if held is None or self.offset is None else min(held, self.offset)
            try:
                updates = await self.bot.get_updates(offset=fetch,
                                                     timeout=self.poll_timeout if self.connected and held is None
                                                     else 0,
                                                     allowed_updates=ALLOWED_UPDATES)
            except asyncio.CancelledError:
                raise
            except tg.RetryAfter as exc:
                await asyncio.sleep(retry_after_seconds(exc))
                continue
            except (TypeError, ValueError, KeyError, AttributeError) as exc:  # an update PTB cannot read
                read = await self._read_alone(fetch, exc)
                if read is None:
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, BACKOFF_CAP)
                    continue
                updates = read
            except (tg.InvalidToken, tg.Forbidden) as exc:
                log.error("telegram: stopped receiving messages: %s (check platforms.telegram.token)",
                          scrub(type(exc).__name__))
                self._disconnected(f"getUpdates refused the token ({type(exc).__name__}: {exc}); "
                                   f"stopped receiving, check platforms.telegram.token")
                return
            except Exception as exc:  # network trouble, a 5xx, a Conflict with another poller
                log.warning("telegram: getUpdates failed (%s); retrying in %gs",
                            scrub(f"{type(exc).__name__}: {exc}"), backoff)
                self._disconnected(f"getUpdates failed: {type(exc).__name__}: {exc}")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_CAP)
                continue
            backoff = BACKOFF_FIRST
            if not self.connected:
                self.connected = True
                if self.context is not None:
                    self.context.report_connected()
            self._acked = fetch
            for update in updates:
                if self.offset is not None and update.update_id < self.offset:
                    continue  # an album's part asked for again while it is held: taken already
                self.offset = update.update_id + 1
                if isinstance(update, Unreadable):
                    continue  # said once when read (:meth:`_read_alone`)
                if self.on_update is not None and self.on_update(update):
                    continue
                incoming = to_incoming(update, self.bot, self.attach)
                if incoming is not None and not (self.albums is not None and self.albums.hold(update, incoming)):
                    self.receive(incoming)

    async def _read_alone(self, offset: int | None, problem: Exception) -> list[Any] | None:
        """The batch ``getUpdates`` could not read, fetched again raw and read one update at a time.

        An update that cannot be read becomes :class:`Unreadable` (skipped, its offset passed, one log line);
        the others are handed on as usual. None when the raw fetch failed too (the loop backs off and asks again).
        """
        from telegram import Update

        kwargs: dict[str, Any] = {"timeout": 0, "allowed_updates": ALLOWED_UPDATES}
        if offset is not None:
            kwargs["offset"] = offset
        try:
            raw = await self.bot.do_api_request("getUpdates", api_kwargs=kwargs)
        except Exception as exc:
            log.warning("telegram: getUpdates could not be read (%s), nor fetched again (%s); retrying",
                        scrub(f"{type(problem).__name__}: {problem}")[:200], scrub(f"{type(exc).__name__}: {exc}"))
            return None
        updates: list[Any] = []
        for item in raw if isinstance(raw, list) else []:
            update_id = item.get("update_id") if isinstance(item, dict) else None
            if not isinstance(update_id, int):
                continue
            try:
                updates.append(Update.de_json(item, self.bot))
            except Exception as exc:
                log.warning("telegram: skipped update %d, which could not be read: %s", update_id,
                            scrub(f"{type(exc).__name__}: {exc}")[:200])
                updates.append(Unreadable(update_id))
        return updates

    def _disconnected(self, error: str) -> None:
        self.connected = False
        if self.context is not None:
            self.context.report_disconnected(error)

    async def _confirm_received(self) -> None:
        """Tell Telegram which updates we took, so a restart does not answer them twice."""
        if self.offset is None or self.offset == self._acked:
            return
        try:
            await self.bot.get_updates(offset=self.offset, timeout=0, limit=1, allowed_updates=ALLOWED_UPDATES)
            self._acked = self.offset
        except Exception as exc:
            log.warning("telegram: could not confirm received updates: %s", scrub(f"{type(exc).__name__}: {exc}"))


def to_incoming(update: Any, bot: Any, attach: Attach | None = None) -> Incoming | None:
    """A Telegram ``Update`` as the core's ``Incoming``; None for what carries neither text nor a file.

    A photo, document, voice note, audio or video comes with its files as
    attachments (``attach``; fetched later, only if the core keeps the
    message) and its caption as the text. A location, venue, contact, poll
    or die comes as one line saying what was shared (:mod:`.described`); a
    live location's moves (edits of it) are not new messages. Stickers and
    joins carry nothing to answer.
    """
    message = update.message
    edited = update.edited_message if message is None else None
    if edited is not None:  # a person's edit: the same message id, its new text (the core decides what to do)
        message = edited
    if message is None or message.chat is None:
        return None
    attachments = attach(message) if attach is not None and message.text is None else ()
    shared = describe(message) if message.text is None and not attachments else None
    if shared is not None and edited is not None:
        return None  # a live location that moved: the same message, not a new question
    if message.text is None and not attachments and shared is None:
        return None  # stickers, joins: nothing to answer
    username = _username(bot)
    thread_id = str(message.message_thread_id) if message.is_topic_message and message.message_thread_id else None
    return Incoming(
        platform="telegram",
        chat_id=str(message.chat.id),
        text=forwarded(message, message.text if message.text is not None else (shared or message.caption or "")),
        sender_id=str(message.from_user.id) if message.from_user else None,
        update_id=str(update.update_id),
        message_id=str(message.message_id),
        thread_id=thread_id,
        chat_kind=str(getattr(message.chat.type, "value", message.chat.type)),  # PTB's ChatType enum -> "group"
        mentioned=_mentions_bot(message, bot, username),
        bot_name=username,
        attachments=attachments,
        edit_of=str(message.message_id) if edited is not None else None,
        from_bot=bool(message.from_user.is_bot) if message.from_user else False,
        sender_name=_sender_name(message),
    )


def _sender_name(message: Any) -> str | None:
    """The sender as people see them (a group's context names them): their full name, or a channel's title."""
    if message.from_user is not None:
        return str(message.from_user.full_name or message.from_user.username or "") or None
    chat = getattr(message, "sender_chat", None)
    return str(chat.title) if chat is not None and chat.title else None


def _username(bot: Any) -> str | None:
    try:
        return bot.username  # known once getMe answered
    except Exception:
        return None


def _mentions_bot(message: Any, bot: Any, username: str | None) -> bool:
    """@-mentioned by name, or a reply to one of the bot's messages."""
    replied = message.reply_to_message
    bot_id = getattr(getattr(bot, "bot", None), "id", None) if _username(bot) else None
    if replied is not None and replied.from_user is not None and bot_id is not None and replied.from_user.id == bot_id:
        return True
    if username is None:
        return False
    wanted = "@" + username.lower()
    kinds = ["mention", "text_mention"]
    found = message.parse_entities(kinds) if message.text is not None else message.parse_caption_entities(kinds)
    for entity, text in found.items():
        if entity.type == "mention" and text.lower() == wanted:
            return True
        if entity.type == "text_mention" and entity.user is not None and entity.user.id == bot_id:
            return True
    return False
