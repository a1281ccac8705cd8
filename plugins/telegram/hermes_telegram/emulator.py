"""A small emulator of the Telegram Bot API, for tests that run without a network.

It speaks the real wire format (``/bot<token>/<method>``, form-encoded or
JSON requests, ``{"ok": true, "result": ...}`` answers, errors with
``error_code`` and ``description``, 429 with ``parameters.retry_after``), so
python-telegram-bot talks to it exactly as it talks to Telegram::

    async with BotApiEmulator(token) as api:
        bot = telegram.Bot(token, base_url=api.base_url)
        ...
        assert api.chat(42).screen == ["Hello, world"]

Like Telegram it counts text in UTF-16 code units (4096 at most), trims
leading and trailing whitespace, rejects empty text, answers an edit to
identical text with "message is not modified", and can enforce a per-chat
rate limit. Each chat keeps a *screen*: the bot's messages in order, each
with its edit history, which is what a person in that chat would see.
Tests push user messages with :meth:`BotApiEmulator.push_message`; the bot
receives them from ``getUpdates``, or, once ``setWebhook`` was called, as
POSTs to the webhook with the secret header (``getUpdates`` then answers
409, as on Telegram; :meth:`~BotApiEmulator.deliver_again` redelivers).
People send files too (:meth:`~BotApiEmulator.push_photo`, ``push_document``,
``push_voice``, ``push_audio``, ``push_video``): the bot gets them with
``getFile`` and the file server (:mod:`.emulator_files`), and every lookup
and download is logged in :attr:`~BotApiEmulator.files`.

Formatting is checked as Telegram checks it: ``entities`` must lie inside
the text (UTF-16) and not split a character, or the call is a 400; each
message keeps its entities per version (:meth:`EmulatedChat.formatted`).
``sendMessageDraft`` works in private chats (``supports_drafts=False`` is
an older server: 404). What a long-lived bot meets is one call away:
:meth:`~BotApiEmulator.migrate_chat`, :meth:`~BotApiEmulator.block_bot`,
:meth:`~BotApiEmulator.remove_chat`, :meth:`~BotApiEmulator.delete_message`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from aiohttp import web

from hermes_gateway import RateBudget
from hermes_gateway.testing import ScreenMessage, SentMedia, samples, serve_locally

from .emulator_buttons import ButtonError, Buttons, kind_of
from .emulator_files import FileStore
from .reactions import reaction_emoji
from .emulator_media import MAX_UPLOAD_BYTES, TOO_LARGE_HTML, UPLOAD_METHODS, UploadRules, read_files

MAX_TEXT_UNITS = 4096
BOT_USER = {"id": 7000001, "is_bot": True, "first_name": "Hermes", "username": "hermes_test_bot",
            "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": False}
NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply markup "
                "are exactly the same as a current content and reply markup of the message")
CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
WEBHOOK_ACTIVE = ("Conflict: can't use getUpdates method while webhook is active; "
                  "use deleteWebhook to delete the webhook first")
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
#: Seconds a draft stays on screen without a new frame or the real message (Telegram: about 30).
DRAFT_LIFETIME = 30.0
#: Seconds before an update the webhook did not accept (non-2xx, no answer) is posted again; Telegram waits longer.
WEBHOOK_RETRY = 0.2


def with_buttons(params: dict[str, Any]) -> bool:
    """A call that carries an inline keyboard (``inject_rate_limit(..., when=with_buttons)``)."""
    return bool(params.get("reply_markup"))


def utf16_units(text: str) -> int:
    """Telegram's length unit: an emoji outside the BMP counts two."""
    return len(text.encode("utf-16-le")) // 2


class ApiError(Exception):
    """An error answer: HTTP status = ``error_code``, plus Telegram's description and parameters."""

    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters


@dataclass(frozen=True)
class ApiCall:
    """One request into a chat, when it arrived (``time.monotonic()``) and how it was answered."""

    at: float
    method: str
    params: dict[str, Any]
    outcome: str  # "ok", "not_modified", "rate_limited", or the error description


@dataclass
class EmulatedChat:
    """One chat as the emulator sees it."""

    chat_id: str
    kind: str = "private"
    messages: list[ScreenMessage] = field(default_factory=list)
    threads: dict[str, str | None] = field(default_factory=dict)   # message id -> message_thread_id
    quotes: dict[str, int] = field(default_factory=dict)           # message id -> the message it replies to
    said: list[tuple[int, str]] = field(default_factory=list)      # what people wrote: (message id, text)
    calls: list[ApiCall] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    pending_errors: list[ApiError] = field(default_factory=list)
    scheduled_errors: dict[int, ApiError] = field(default_factory=dict)  # index in calls -> error
    #: (method, which of its calls, error): the next such call answers it (see ``inject_rate_limit``)
    targeted_errors: list[tuple[str, Callable[[dict[str, Any]], bool] | None, ApiError]] = \
        field(default_factory=list)
    blocked_until: float = float("-inf")
    violations: list[str] = field(default_factory=list)
    entities: dict[str, list[dict[str, Any]]] = field(default_factory=dict)       # message id -> entities now
    entity_history: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)  # ... per version
    refusal: ApiError | None = None     # every call answers this: blocked, chat not found, migrated
    drafts: dict[int, list[str]] = field(default_factory=dict)   # draft id -> every frame's text, in order
    draft: tuple[int, str, float] | None = None   # the draft on screen: (id, text, when); a real message ends it
    uploads: list[SentMedia] = field(default_factory=list)   # every accepted attachment, in order
    #: the bot's reaction on each message now (message id -> emoji; set again replaces it, [] clears)
    reactions: dict[str, str] = field(default_factory=dict)
    #: every accepted setMessageReaction: (message id, emoji or "" when cleared, time.monotonic())
    reaction_log: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def visible_draft(self) -> str | None:
        """The draft a person sees below the messages now (Telegram drops it after ~30 s)."""
        if self.draft is None or time.monotonic() - self.draft[2] > DRAFT_LIFETIME:
            return None
        return self.draft[1]
    tokens: float = 0.0
    refilled: float = 0.0
    next_message_id: int = 1

    @property
    def screen(self) -> list[str]:
        """The bot's messages, top to bottom, as they read now."""
        return [m.text for m in self.messages]

    def formatted(self, index: int = -1, version: int | None = None) -> list[tuple[str, str]]:
        """Message ``index``'s entities as (type, the text each covers): what renders as formatting.

        ``version`` picks an earlier text from the message's history (default: what it shows now).
        """
        message = self.messages[index]
        history = self.entity_history.get(message.id, [])
        text = message.text if version is None else message.history[version]
        entities = self.entities.get(message.id, []) if version is None else history[version]
        return covered(text, entities)

    def screen_in_thread(self, thread_id: str | None) -> list[str]:
        return [m.text for m in self.messages if self.threads.get(m.id) == thread_id]

    @property
    def rate_limited(self) -> list[ApiCall]:
        return [c for c in self.calls if c.outcome == "rate_limited"]


class BotApiEmulator:
    """An aiohttp app on 127.0.0.1 (ephemeral port) that answers like the Bot API for one bot token.

    ``rate_limit`` (optional) is enforced per chat like Telegram's flood
    control: a call beyond it gets 429 with ``retry_after`` rounded up to
    whole seconds, as Telegram sends it. A call into a chat before a 429's
    ``retry_after`` has passed is recorded in ``violations`` (Telegram
    would punish it with a longer wait).
    """

    def __init__(self, token: str, *, rate_limit: RateBudget | None = None,
                 max_text_units: int = MAX_TEXT_UNITS, supports_drafts: bool = True,
                 drafts_rate_limited: bool = True) -> None:
        """``supports_drafts=False`` is a server from before Bot API 9.3: sendMessageDraft is 404 Not Found.
        ``drafts_rate_limited=False``: draft frames do not count against ``rate_limit`` (Telegram does not
        document whether they do), though a chat under a 429 still refuses them."""
        self.token = token
        self.drafts_rate_limited = drafts_rate_limited
        self.supports_drafts = supports_drafts
        self.rate_limit = rate_limit
        self.max_text_units = max_text_units
        self.chats: dict[str, EmulatedChat] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.request_times: list[float] = []   # time.monotonic() of each entry in requests
        self._method_errors: dict[str, list[ApiError]] = {}
        self._updates: list[dict[str, Any]] = []
        #: Inline keyboards, button presses and the toasts answering them (:mod:`.emulator_buttons`).
        self.buttons = Buttons()
        #: ``allowed_updates`` of the last getUpdates that gave some (Telegram keeps it between calls).
        self.allowed_updates: list[str] | None = None
        self._update_ids = itertools.count(1)
        self._media_group_ids = itertools.count(13_579_246_801_234_567)  # an album's id: a long numeric string
        self._new_update = asyncio.Condition()
        self._poll_generation = 0
        self._closing = False
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        #: The webhook as set by setWebhook: {"url", "secret_token", "allowed_updates"}; None while polling.
        self.webhook: dict[str, Any] | None = None
        #: Every POST to the webhook: (update_id, HTTP status, or 0 when it could not be reached).
        self.webhook_deliveries: list[tuple[int, int]] = []
        self._webhook_task: asyncio.Task[None] | None = None
        self._webhook_wake = asyncio.Event()
        self._delivered: dict[int, dict[str, Any]] = {}
        #: sendPhoto/sendDocument/sendVideo/sendAudio (:mod:`.emulator_media`): limits, stalls.
        self.uploads = UploadRules(self)
        #: Files people send (:mod:`.emulator_files`): getFile, the file server, the download log.
        self.files = FileStore(token)

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> "BotApiEmulator":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> str:
        app = web.Application(client_max_size=MAX_UPLOAD_BYTES + 1024 * 1024)  # multipart overhead
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self.files.serve)
        self._runner = await serve_locally(app, shutdown_timeout=0.5)
        self.port = self._runner.addresses[0][1]
        return self.base_url

    async def stop(self) -> None:
        task, self._webhook_task = self._webhook_task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._runner is not None:
            self._closing = True  # end any waiting getUpdates with no updates
            async with self._new_update:
                self._new_update.notify_all()
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        """What to give python-telegram-bot: ``Bot(token, base_url=emulator.base_url)``."""
        if self.port is None:
            raise RuntimeError("the emulator is not started")
        return f"http://127.0.0.1:{self.port}/bot"

    # ------------------------------------------------------------------ what tests use

    def chat(self, chat_id: int | str) -> EmulatedChat:
        key = str(chat_id)
        if key not in self.chats:  # people have positive ids, groups negative
            self.chats[key] = EmulatedChat(key, kind="supergroup" if key.startswith("-") else "private")
        return self.chats[key]

    def screen(self, chat_id: int | str) -> list[str]:
        return self.chat(chat_id).screen

    async def push_message(self, chat_id: int, text: str, *, chat_type: str = "private",
                           thread_id: int | None = None, user_id: int = 1001, first_name: str = "Ada",
                           reply_to: str | int | None = None, is_bot: bool = False) -> int:
        """A person writes ``text`` in the chat; the bot sees it in ``getUpdates``. Returns the update id.

        ``reply_to``: the id of a message in the chat this one replies to (the bot's, or a person's).
        ``is_bot``: the sender is another bot (``from.is_bot``).
        """
        message = self._person_message(chat_id, text, chat_type=chat_type, thread_id=thread_id, user_id=user_id,
                                       first_name=first_name, reply_to=reply_to)
        message["from"]["is_bot"] = is_bot
        message["text"] = text
        entities = _entities_telegram_finds(text)
        if entities:
            message["entities"] = entities
        return await self.push_update({"message": message})

    async def push_photo(self, chat_id: int, data: bytes, *, caption: str = "", **person: Any) -> int:
        """A person sends a photo (``data``: PNG or JPEG bytes) with a caption; Telegram lists it in two sizes.

        The largest size serves ``data``; a 90-pixel thumbnail (a real JPEG when Pillow is installed) comes first.
        """
        return await self.push_content(chat_id, "photo", self._photo_sizes(data), caption, person)

    async def push_album(self, chat_id: int, photos: list[bytes], *, caption: str = "", **person: Any) -> list[int]:
        """A person sends several photos at once: one message and one update per photo, all with the same
        ``media_group_id``, the caption on the first (as Telegram's apps send an album). Returns the update ids."""
        group = str(next(self._media_group_ids))
        update_ids = []
        for i, data in enumerate(photos):
            said = caption if i == 0 else ""
            message = self._person_message(chat_id, f"[photo]{' ' + said if said else ''}", **person)
            message["photo"] = self._photo_sizes(data)
            message["media_group_id"] = group
            if said:
                message["caption"] = said
            update_ids.append(await self.push_update({"message": message}))
        return update_ids

    def _photo_sizes(self, data: bytes) -> list[dict[str, Any]]:
        """A photo's ``PhotoSize`` list, stored on the file server: a thumbnail, then the photo itself."""
        from .emulator_media import image_size

        width, height = image_size(data) or (0, 0)
        sizes = []
        thumbnail = _thumbnail(data)
        if thumbnail is not None:
            stored = self.files.add("photo", thumbnail[0])
            sizes.append({**self.files.json(stored), "width": thumbnail[1], "height": thumbnail[2]})
        stored = self.files.add("photo", data)
        sizes.append({**self.files.json(stored), "width": width, "height": height})
        return sizes

    async def push_document(self, chat_id: int, data: bytes | None, *, filename: str = "file.pdf",
                            mime: str = "application/pdf", size: int | None = None, caption: str = "",
                            **person: Any) -> int:
        """A person sends a file. ``data=None`` with ``size``: a file declared that large, never held here."""
        extension = filename.rsplit(".", 1)[-1] if "." in filename else ""
        stored = self.files.add("document", data, size=size, extension=extension)
        return await self.push_content(chat_id, "document", {**self.files.json(stored), "file_name": filename,
                                                           "mime_type": mime}, caption, person)

    async def push_voice(self, chat_id: int, data: bytes | None = None, *, duration: int = 1,
                         mime: str = "audio/ogg", **person: Any) -> int:
        """A person records a voice note (default: half a second of real OGG/Opus silence)."""
        stored = self.files.add("voice", data if data is not None else samples.voice_ogg(0.5))
        return await self.push_content(chat_id, "voice", {**self.files.json(stored), "duration": duration,
                                                        "mime_type": mime}, "", person)

    async def push_audio(self, chat_id: int, data: bytes, *, filename: str = "song.mp3", mime: str = "audio/mpeg",
                         duration: int = 1, caption: str = "", **person: Any) -> int:
        """A person sends a music file."""
        stored = self.files.add("audio", data, extension=filename.rsplit(".", 1)[-1])
        return await self.push_content(chat_id, "audio", {**self.files.json(stored), "duration": duration,
                                                        "file_name": filename, "mime_type": mime}, caption, person)

    async def push_video(self, chat_id: int, data: bytes, *, filename: str = "clip.mp4", mime: str = "video/mp4",
                         note: bool = False, caption: str = "", **person: Any) -> int:
        """A person sends a video, or (``note=True``) records a round video note (no name, no mime type)."""
        if note:
            stored = self.files.add("video_note", data)
            return await self.push_content(chat_id, "video_note", {**self.files.json(stored), "length": 240,
                                                                 "duration": 1}, "", person)
        stored = self.files.add("video", data)
        return await self.push_content(chat_id, "video", {**self.files.json(stored), "width": 320, "height": 240,
                                                        "duration": 1, "file_name": filename, "mime_type": mime},
                                     caption, person)

    async def push_content(self, chat_id: int, field: str, value: Any, caption: str = "",
                           person: dict[str, Any] | None = None) -> int:
        """A person's message whose content is ``field: value`` as given: a sticker, a location, a file by hand.

        ``person``: :meth:`push_message`'s keywords (``chat_type``, ``user_id`` ...).
        """
        person = person or {}
        shown = f"[{field}]" + (f" {caption}" if caption else "")
        message = self._person_message(chat_id, shown, **person)
        message[field] = value
        if caption:
            message["caption"] = caption
            entities = _entities_telegram_finds(caption)
            if entities:
                message["caption_entities"] = entities
        return await self.push_update({"message": message})

    def _person_message(self, chat_id: int, said: str, *, chat_type: str = "private", thread_id: int | None = None,
                        user_id: int = 1001, first_name: str = "Ada",
                        reply_to: str | int | None = None) -> dict[str, Any]:
        """A message from a person, without its content: the chat, the sender, the topic, the reply."""
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name
        else:
            chat["title"] = f"Group {chat_id}"
            if thread_id is not None:
                chat["is_forum"] = True
        emulated = self.chat(chat_id)
        emulated.kind = chat_type
        message_id = emulated.next_message_id  # one sequence per chat, people's and the bot's messages alike
        emulated.next_message_id += 1
        emulated.said.append((message_id, said))
        message: dict[str, Any] = {
            "message_id": message_id, "date": int(time.time()), "chat": chat,
            "from": {"id": user_id, "is_bot": False, "first_name": first_name},
        }
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if reply_to is not None:
            bots = {m.id: m for m in emulated.messages}
            if str(reply_to) in bots:
                message["reply_to_message"] = self._message_json(emulated, bots[str(reply_to)])
            else:
                said_before = dict(emulated.said)
                message["reply_to_message"] = {
                    "message_id": int(reply_to), "date": int(time.time()), "chat": chat,
                    "text": said_before.get(int(reply_to), ""), "from": {"id": user_id, "is_bot": False,
                                                                         "first_name": first_name}}
        return message

    async def push_edit(self, chat_id: int, message_id: int, text: str, *, chat_type: str = "private",
                        user_id: int = 1001, first_name: str = "Ada") -> int:
        """A person edits message ``message_id`` they sent to read ``text``: an ``edited_message`` update."""
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name
        else:
            chat["title"] = f"Group {chat_id}"
        emulated = self.chat(chat_id)
        emulated.said = [(mid, text if mid == message_id else said) for mid, said in emulated.said]
        now = int(time.time())
        message = {"message_id": message_id, "date": now, "edit_date": now, "chat": chat, "text": text,
                   "from": {"id": user_id, "is_bot": False, "first_name": first_name}}
        return await self.push_update({"edited_message": message})

    async def press_button(self, chat_id: int, message_id: str | int, label: str, *, user_id: int = 1001,
                           first_name: str = "Ada") -> int:
        """A person presses the button ``label`` under the bot's message: a ``callback_query`` update."""
        chat = self.chat(chat_id)
        data = self.buttons.data_of(chat.chat_id, str(message_id), label)
        message = next(m for m in chat.messages if m.id == str(message_id))
        query_id = self.buttons.new_query(chat.chat_id, str(user_id))
        return await self.push_update({"callback_query": {
            "id": query_id, "chat_instance": f"ci{chat.chat_id}", "data": data,
            "from": {"id": user_id, "is_bot": False, "first_name": first_name},
            "message": self._message_json(chat, message)}})

    async def _answer_callback_query(self, params: dict[str, Any]) -> Any:
        try:
            return self.buttons.answer(params)
        except ButtonError as exc:
            raise ApiError(400, str(exc)) from None

    async def push_update(self, body: dict[str, Any]) -> int:
        """Queue any update object (``message``, ``edited_message``, ``channel_post``...)."""
        update_id = next(self._update_ids)
        self._updates.append({"update_id": update_id, **body})
        async with self._new_update:
            self._new_update.notify_all()
        self._webhook_wake.set()
        return update_id

    async def deliver_again(self, update_id: int) -> int:
        """Post an update the webhook already accepted once more, as Telegram does when it missed the 200.

        Returns the HTTP status the webhook answered.
        """
        if self.webhook is None:
            raise RuntimeError("no webhook is set")
        update = self._delivered[update_id]
        return await self._post_update(update)

    @property
    def pending_updates(self) -> int:
        """Updates not yet confirmed by a getUpdates with a higher offset."""
        return len(self._updates)

    def inject_rate_limit(self, chat_id: int | str, retry_after: int, *, at_call: int | None = None,
                          method: str | None = None, when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """The next call into the chat (or call number ``at_call``, from 0) answers 429 "retry after N".

        ``method`` (e.g. ``"setMessageReaction"``, ``"sendChatAction"``, ``"sendPhoto"``): the next call of
        that method instead; ``when(params)``: only one whose parameters it accepts (a question with
        buttons is a ``sendMessage`` with ``reply_markup``: ``when=with_buttons``).
        """
        parameters = {"retry_after": retry_after}
        description = f"Too Many Requests: retry after {retry_after}"
        if method is None and when is None:
            self.fail_next(chat_id, 429, description, parameters, at_call=at_call)
            return
        self.chat(chat_id).targeted_errors.append((method or "", when, ApiError(429, description, parameters)))

    def fail_next(self, chat_id: int | str, code: int, description: str,
                  parameters: dict[str, Any] | None = None, *, at_call: int | None = None) -> None:
        """The next call into the chat (or call number ``at_call``) answers with this error, to no effect."""
        error = ApiError(code, description, parameters)
        if at_call is None:
            self.chat(chat_id).pending_errors.append(error)
        else:
            self.chat(chat_id).scheduled_errors[at_call] = error

    def migrate_chat(self, old_chat_id: int | str, new_chat_id: int) -> None:
        """The group became a supergroup: every call into the old id answers 400 with ``migrate_to_chat_id``."""
        self.chat(old_chat_id).refusal = ApiError(
            400, "Bad Request: group chat was upgraded to a supergroup chat", {"migrate_to_chat_id": new_chat_id})
        self.chat(new_chat_id).kind = "supergroup"

    def block_bot(self, chat_id: int | str) -> None:
        """The person blocked the bot: every call into the chat answers 403."""
        self.chat(chat_id).refusal = ApiError(403, "Forbidden: bot was blocked by the user")

    def remove_chat(self, chat_id: int | str) -> None:
        """The chat no longer exists for the bot (deleted, or the bot was removed): 400 chat not found."""
        self.chat(chat_id).refusal = ApiError(400, "Bad Request: chat not found")

    def delete_message(self, chat_id: int | str, message_id: str | int) -> None:
        """Someone deleted one of the bot's messages: it leaves the screen, and editing it fails."""
        chat = self.chat(chat_id)
        chat.messages = [m for m in chat.messages if m.id != str(message_id)]

    def fail_method(self, method: str, code: int, description: str, times: int = 1,
                    parameters: dict[str, Any] | None = None) -> None:
        """The next ``times`` calls of ``method`` (e.g. "getUpdates") answer with this error."""
        error = ApiError(code, description, parameters)
        self._method_errors.setdefault(method.lower(), []).extend([error] * times)

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error(ApiError(401, "Unauthorized"))
        method = request.match_info["method"]
        upload = method.lower() in UPLOAD_METHODS
        if upload and (request.content_length or 0) > self.uploads.max_upload_bytes:
            self.requests.append((method, {}))
            self.request_times.append(time.monotonic())
            return web.Response(status=413, text=TOO_LARGE_HTML, content_type="text/html")
        try:
            params = await _params(request)
            files = await read_files(request) if upload else []
        except ValueError as exc:
            return _error(ApiError(400, f"Bad Request: {exc}"))
        self.requests.append((method, params))
        self.request_times.append(time.monotonic())
        if upload:
            if self._method_errors.get(method.lower()):
                return _error(self._method_errors[method.lower()].pop(0))
            try:
                result = await self.uploads.handle(method, params, files)
            except ApiError as exc:
                return _error(exc)
            return web.json_response({"ok": True, "result": result})
        handler = {
            "getme": self._get_me, "sendmessage": self._send_message, "editmessagetext": self._edit_message_text,
            "sendchataction": self._send_chat_action, "getupdates": self._get_updates,
            "deletewebhook": self._delete_webhook, "setwebhook": self._set_webhook,
            "getwebhookinfo": self._get_webhook_info, "close": self._true, "logout": self._true,
            "getfile": self._get_file, "setmessagereaction": self._set_message_reaction,
            "answercallbackquery": self._answer_callback_query,
            **({"sendmessagedraft": self._send_message_draft} if self.supports_drafts else {}),
        }.get(method.lower())
        if handler is None:
            return _error(ApiError(404, "Not Found"))
        if self._method_errors.get(method.lower()):
            return _error(self._method_errors[method.lower()].pop(0))
        try:
            result = await handler(params)
        except ApiError as exc:
            return _error(exc)
        return web.json_response({"ok": True, "result": result})

    async def _get_me(self, params: dict[str, Any]) -> Any:
        return dict(BOT_USER)

    async def _true(self, params: dict[str, Any]) -> Any:
        return True

    async def _get_file(self, params: dict[str, Any]) -> Any:
        return self.files.get_file(params)

    async def _delete_webhook(self, params: dict[str, Any]) -> Any:
        if params.get("drop_pending_updates") in (True, "true", "True"):
            self._updates.clear()
        self.webhook = None
        return True

    async def _set_webhook(self, params: dict[str, Any]) -> Any:
        """Like a local Bot API server: an http:// URL is accepted (api.telegram.org wants https)."""
        url = str(params.get("url") or "")
        if not url:  # an empty URL removes the webhook
            return await self._delete_webhook(params)
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret is not None:
            secret = str(secret)
            if not 1 <= len(secret) <= 256 or not all(c.isascii() and (c.isalnum() or c in "_-") for c in secret):
                raise ApiError(400, "Bad Request: secret token contains unallowed characters")
        if params.get("drop_pending_updates") in (True, "true", "True"):
            self._updates.clear()
        allowed = _json_field(params.get("allowed_updates")) if params.get("allowed_updates") else None
        self.webhook = {"url": url, "secret_token": secret, "allowed_updates": allowed}
        if self._webhook_task is None:
            self._webhook_task = asyncio.get_running_loop().create_task(self._webhook_sender(),
                                                                       name="emulator-webhook")
        self._webhook_wake.set()
        async with self._new_update:
            self._new_update.notify_all()  # a getUpdates waiting now ends with 409
        return True

    async def _get_webhook_info(self, params: dict[str, Any]) -> Any:
        return {"url": (self.webhook or {}).get("url", ""), "has_custom_certificate": False,
                "pending_update_count": len(self._updates)}

    async def _webhook_sender(self) -> None:
        """Post pending updates to the webhook, one at a time and in order, until each gets a 2xx."""
        while True:
            await self._webhook_wake.wait()
            self._webhook_wake.clear()
            while self.webhook is not None and self._updates:
                update = self._updates[0]
                allowed = self.webhook.get("allowed_updates")
                if allowed and kind_of(update) not in allowed:  # not asked for: Telegram drops it
                    self._updates.pop(0)
                    continue
                status = await self._post_update(update)
                if 200 <= status < 300:
                    if self._updates and self._updates[0] is update:
                        self._updates.pop(0)
                    self._delivered[update["update_id"]] = update
                else:
                    await asyncio.sleep(WEBHOOK_RETRY)

    async def _post_update(self, update: dict[str, Any], http: Any = None, timeout: float = 10.0) -> int:
        """POST one update to the webhook, over ``http`` (an ``aiohttp.ClientSession``) or a session of its own;
        its HTTP status, 0 when it could not be posted. Recorded in ``webhook_deliveries``."""
        import aiohttp

        assert self.webhook is not None
        headers = {SECRET_HEADER: self.webhook["secret_token"]} if self.webhook.get("secret_token") else {}
        session = aiohttp.ClientSession() if http is None else http
        try:
            async with session.post(self.webhook["url"], json=update, headers=headers,
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                status = resp.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            status = 0
        finally:
            if http is None:
                await session.close()
        self.webhook_deliveries.append((update["update_id"], status))
        return status

    async def _send_message(self, params: dict[str, Any]) -> Any:
        chat = self._admit("sendMessage", params)
        text, entities = self._check_text(chat, "sendMessage", params)
        try:
            self.buttons.set_markup(chat.chat_id, str(chat.next_message_id), params.get("reply_markup"))
        except (ButtonError, ValueError) as exc:
            self._log(chat, "sendMessage", params, str(exc))
            raise ApiError(400, str(exc) if isinstance(exc, ButtonError) else "Bad Request: can't parse "
                                                                              "reply keyboard markup JSON object") from None
        message = ScreenMessage(str(chat.next_message_id), text, [text])
        chat.next_message_id += 1
        chat.messages.append(message)
        chat.entities[message.id] = entities
        chat.entity_history[message.id] = [entities]
        chat.draft = None  # the real message takes the draft's place
        thread = params.get("message_thread_id")
        chat.threads[message.id] = str(thread) if thread not in (None, "") else None
        reply = _json_field(params.get("reply_parameters"))
        if reply:
            chat.quotes[message.id] = int(reply["message_id"])
        self._log(chat, "sendMessage", params, "ok")
        return self._message_json(chat, message)

    async def _send_message_draft(self, params: dict[str, Any]) -> Any:
        """Bot API 9.3: an ephemeral preview in a private chat; empty text shows the "thinking" placeholder."""
        chat = self._admit("sendMessageDraft", params)
        if chat.kind != "private":
            self._log(chat, "sendMessageDraft", params, "not a private chat")
            raise ApiError(400, "Bad Request: drafts can be sent only to private chats")
        draft_id = _int(params.get("draft_id"), 0)
        if draft_id == 0:
            self._log(chat, "sendMessageDraft", params, "draft_id is empty")
            raise ApiError(400, "Bad Request: draft_id must be non-zero")
        raw = str(params.get("text") or "")
        if utf16_units(raw) > self.max_text_units:
            chat.violations.append(f"sendMessageDraft of {utf16_units(raw)} UTF-16 units")
            self._log(chat, "sendMessageDraft", params, "message is too long")
            raise ApiError(400, "Bad Request: message is too long")
        try:
            _checked_entities(raw, params.get("entities"))
        except ApiError as exc:
            self._log(chat, "sendMessageDraft", params, exc.description)
            raise
        text = raw.strip()
        chat.drafts.setdefault(draft_id, []).append(text)
        chat.draft = (draft_id, text, time.monotonic())
        self._log(chat, "sendMessageDraft", params, "ok")
        return True

    async def _edit_message_text(self, params: dict[str, Any]) -> Any:
        if "inline_message_id" in params:
            raise ApiError(400, "Bad Request: inline messages are not emulated")
        chat = self._admit("editMessageText", params)
        target = next((m for m in chat.messages if m.id == str(params.get("message_id", ""))), None)
        if target is None:
            self._log(chat, "editMessageText", params, "message to edit not found")
            raise ApiError(400, "Bad Request: message to edit not found")
        text, entities = self._check_text(chat, "editMessageText", params)
        if text == target.text and entities == chat.entities.get(target.id, []):
            self._log(chat, "editMessageText", params, "not_modified")
            raise ApiError(400, NOT_MODIFIED)
        self.buttons.set_markup(chat.chat_id, target.id, params.get("reply_markup"))  # none given: removed
        target.text = text
        target.history.append(text)
        chat.entities[target.id] = entities
        chat.entity_history.setdefault(target.id, []).append(entities)
        self._log(chat, "editMessageText", params, "ok")
        return {**self._message_json(chat, target), "edit_date": int(time.time())}

    async def _set_message_reaction(self, params: dict[str, Any]) -> Any:
        """A bot's reaction: one emoji from the fixed list, on a message that exists in the chat."""
        chat = self._admit("setMessageReaction", params)
        message_id = str(params.get("message_id", ""))
        known = {str(mid) for mid, _ in chat.said} | {m.id for m in chat.messages}
        if message_id not in known:
            self._log(chat, "setMessageReaction", params, "message not found")
            raise ApiError(400, "Bad Request: message to react not found")
        reaction = _json_field(params.get("reaction")) if params.get("reaction") else []
        if len(reaction) > 1:
            self._log(chat, "setMessageReaction", params, "too many")
            raise ApiError(400, "Bad Request: REACTIONS_TOO_MANY")
        emoji = ""
        for item in reaction:
            if item.get("type") != "emoji" or item.get("emoji") not in reaction_emoji():
                self._log(chat, "setMessageReaction", params, "invalid reaction")
                raise ApiError(400, "Bad Request: REACTION_INVALID")
            emoji = item["emoji"]
        if emoji:
            chat.reactions[message_id] = emoji
        else:
            chat.reactions.pop(message_id, None)
        chat.reaction_log.append((message_id, emoji, time.monotonic()))
        self._log(chat, "setMessageReaction", params, "ok")
        return True

    async def _send_chat_action(self, params: dict[str, Any]) -> Any:
        chat = self._admit("sendChatAction", params)
        action = params.get("action")
        if action not in ("typing", "upload_photo", "record_video", "upload_video", "record_voice",
                          "upload_voice", "upload_document", "choose_sticker", "find_location",
                          "record_video_note", "upload_video_note"):
            self._log(chat, "sendChatAction", params, "wrong action")
            raise ApiError(400, "Bad Request: wrong parameter action in request")
        chat.actions.append(action)
        self._log(chat, "sendChatAction", params, "ok")
        return True

    async def _get_updates(self, params: dict[str, Any]) -> Any:
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_ACTIVE)
        offset = _int(params.get("offset"), 0)
        limit = min(max(_int(params.get("limit"), 100), 1), 100)
        if params.get("allowed_updates") not in (None, ""):
            self.allowed_updates = list(_json_field(params.get("allowed_updates")) or []) or None
        if self.allowed_updates is not None:  # Telegram never delivers the other kinds: they are dropped
            self._updates = [u for u in self._updates if kind_of(u) in self.allowed_updates]
        timeout = max(_int(params.get("timeout"), 0), 0)
        if offset > 0:  # confirm everything before offset
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        self._poll_generation += 1
        generation = self._poll_generation
        async with self._new_update:
            self._new_update.notify_all()  # an older waiting call ends with 409 Conflict
            deadline = asyncio.get_running_loop().time() + timeout
            while not self._ready(offset):
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(self._new_update.wait(), remaining)
                except asyncio.TimeoutError:
                    break
                if self._closing:
                    return []
                if self.webhook is not None:
                    raise ApiError(409, WEBHOOK_ACTIVE)
                if generation != self._poll_generation:
                    raise ApiError(409, CONFLICT)
        return [u for u in self._updates if u["update_id"] >= offset][:limit]

    def _ready(self, offset: int) -> bool:
        return any(u["update_id"] >= offset for u in self._updates)

    # ------------------------------------------------------------------ rules

    def _admit(self, method: str, params: dict[str, Any]) -> EmulatedChat:
        """Flood control and injected errors, checked before a call has any effect."""
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise ApiError(400, "Bad Request: chat_id is empty")
        chat = self.chat(chat_id)
        now = time.monotonic()
        if now < chat.blocked_until:
            chat.violations.append(f"{method} {chat.blocked_until - now:.3f}s before retry_after ended")
        if chat.refusal is not None:
            self._refuse(chat, method, params, chat.refusal, now)
        scheduled = chat.scheduled_errors.pop(len(chat.calls), None)
        if scheduled is not None:
            self._refuse(chat, method, params, scheduled, now)
        if chat.pending_errors:
            self._refuse(chat, method, params, chat.pending_errors.pop(0), now)
        for index, (kind, when, error) in enumerate(chat.targeted_errors):
            if (not kind or kind.lower() == method.lower()) and (when is None or when(params)):
                del chat.targeted_errors[index]
                self._refuse(chat, method, params, error, now)
        if now < chat.blocked_until and method == "sendMessageDraft" and not self.drafts_rate_limited:
            wait = max(1, math.ceil(chat.blocked_until - now))
            self._refuse(chat, method, params, ApiError(
                429, f"Too Many Requests: retry after {wait}", {"retry_after": wait}), now)
        if self.rate_limit is not None and (method != "sendMessageDraft" or self.drafts_rate_limited):
            budget = self.rate_limit
            if chat.refilled == 0.0:
                chat.tokens, chat.refilled = float(budget.burst), now
            chat.tokens = min(float(budget.burst), chat.tokens + (now - chat.refilled) * budget.rate)
            chat.refilled = now
            if chat.tokens < 1.0:
                wait = max(1, math.ceil((1.0 - chat.tokens) / budget.rate))
                self._refuse(chat, method, params, ApiError(
                    429, f"Too Many Requests: retry after {wait}", {"retry_after": wait}), now)
            chat.tokens -= 1.0
        return chat

    def _refuse(self, chat: EmulatedChat, method: str, params: dict[str, Any], error: ApiError, now: float) -> None:
        retry_after = (error.parameters or {}).get("retry_after")
        if retry_after:
            chat.blocked_until = max(chat.blocked_until, now + float(retry_after))
            self._log(chat, method, params, "rate_limited")
        else:
            self._log(chat, method, params, error.description)
        raise error

    def _check_text(self, chat: EmulatedChat, method: str,
                    params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The text as Telegram keeps it (trimmed), and its entities, checked as strictly as Telegram does."""
        raw = params.get("text")
        if raw is None:
            self._log(chat, method, params, "text is empty")
            raise ApiError(400, "Bad Request: message text is empty")
        raw = str(raw)
        if utf16_units(raw) > self.max_text_units:
            chat.violations.append(f"{method} of {utf16_units(raw)} UTF-16 units")
            self._log(chat, method, params, "message is too long")
            raise ApiError(400, "Bad Request: message is too long")
        text = raw.strip()  # Telegram drops leading and trailing whitespace (see telegram_trim)
        if not text:
            self._log(chat, method, params, "text is empty")
            raise ApiError(400, "Bad Request: message text is empty")
        if params.get("parse_mode"):
            chat.violations.append(f"{method} with parse_mode {params['parse_mode']!r} (mid-stream markup can fail)")
        try:
            entities = _checked_entities(raw, params.get("entities"))
        except ApiError as exc:
            self._log(chat, method, params, exc.description)
            raise
        return telegram_trim(raw, entities)

    def _message_json(self, chat: EmulatedChat, message: ScreenMessage) -> dict[str, Any]:
        chat_json: dict[str, Any] = {"id": _chat_id_json(chat.chat_id), "type": chat.kind}
        if chat.kind == "private":
            chat_json["first_name"] = "Ada"
        else:
            chat_json["title"] = f"Group {chat.chat_id}"
        body: dict[str, Any] = {"message_id": int(message.id), "date": int(time.time()), "chat": chat_json,
                                "from": dict(BOT_USER), "text": message.text}
        if chat.entities.get(message.id):
            body["entities"] = chat.entities[message.id]
        thread = chat.threads.get(message.id)
        if thread is not None:
            body["message_thread_id"] = _int(thread, 0)
            body["is_topic_message"] = True
        return body

    def _log(self, chat: EmulatedChat, method: str, params: dict[str, Any], outcome: str) -> None:
        chat.calls.append(ApiCall(time.monotonic(), method, dict(params), outcome))


async def _params(request: web.Request) -> dict[str, Any]:
    """Telegram takes query strings, form bodies (nested values JSON-encoded) and JSON bodies."""
    params: dict[str, Any] = dict(request.query)
    if request.method == "POST" and request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if not isinstance(body, dict):
                raise ValueError("the JSON body must be an object")
            params.update(body)
        else:
            params.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    return params


def _json_field(value: Any) -> Any:
    """Form-encoded requests carry nested objects as JSON text; JSON requests carry them as objects."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ApiError(400, "Bad Request: can't parse reply parameters JSON object") from None
    return value


def _int(value: Any, default: int) -> int:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError(400, f"Bad Request: expected an integer, got {value!r}") from None


def _chat_id_json(chat_id: str) -> int | str:
    try:
        return int(chat_id)
    except ValueError:
        return chat_id


def _thumbnail(data: bytes) -> tuple[bytes, int, int] | None:
    """A 90-pixel JPEG of an image (Telegram's smallest photo size), when Pillow can read it."""
    try:
        import io

        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.thumbnail((90, 90))
            out = io.BytesIO()
            image.convert("RGB").save(out, format="JPEG")
            return out.getvalue(), image.width, image.height
    except Exception:
        return None


def _error(exc: ApiError) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": exc.code, "description": exc.description}
    if exc.parameters:
        body["parameters"] = exc.parameters
    return web.Response(status=exc.code, text=json.dumps(body), content_type="application/json")


def _entities_telegram_finds(text: str) -> list[dict[str, Any]]:
    """The entities Telegram adds to a person's plain text: @mentions and /commands (UTF-16 offsets)."""
    import re

    found = []
    for match in re.finditer(r"(?<![\w@/])(@[A-Za-z0-9_]{5,32}|/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{5,32})?)", text):
        offset = len(text[:match.start()].encode("utf-16-le")) // 2
        length = len(match.group(0).encode("utf-16-le")) // 2
        kind = "mention" if match.group(0).startswith("@") else "bot_command"
        found.append({"type": kind, "offset": offset, "length": length})
    return found


ENTITY_TYPES = frozenset({
    "mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number", "bold", "italic", "underline",
    "strikethrough", "spoiler", "blockquote", "expandable_blockquote", "code", "pre", "text_link", "text_mention",
    "custom_emoji", "date_time"})


def _checked_entities(text: str, value: Any) -> list[dict[str, Any]]:
    """``entities`` as Telegram checks them: known types, inside the text (UTF-16), never splitting an emoji."""
    if value in (None, "", "[]"):
        return []
    entities = _json_field(value) if isinstance(value, str) else value
    if not isinstance(entities, list):
        raise ApiError(400, "Bad Request: can't parse entities JSON object")
    units = text.encode("utf-16-le")
    size = len(units) // 2
    checked = []
    for entity in entities:
        if not isinstance(entity, dict) or entity.get("type") not in ENTITY_TYPES:
            raise ApiError(400, f"Bad Request: can't parse entities: unsupported entity type in {entity!r}")
        offset, length = entity.get("offset"), entity.get("length")
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length < 1:
            raise ApiError(400, f"Bad Request: can't parse entities: bad offset or length in {entity!r}")
        if offset + length > size:
            raise ApiError(400, f"Bad Request: can't parse entities: entity ends at {offset + length}, "
                                f"beyond the text's {size} UTF-16 units")
        for edge in (offset, offset + length):
            if edge < size and 0xDC00 <= int.from_bytes(units[2 * edge:2 * edge + 2], "little") <= 0xDFFF:
                raise ApiError(400, "Bad Request: can't parse entities: an entity boundary splits a character")
        if entity["type"] == "text_link":
            url = str(entity.get("url") or "")
            if not url.startswith(("http://", "https://", "tg://")):
                raise ApiError(400, "Bad Request: can't parse entities: wrong HTTP URL")
        checked.append({k: entity[k] for k in ("type", "offset", "length", "url", "language") if k in entity})
    return checked


#: Entities whose leading whitespace Telegram keeps (tdlib: "hidden data" entities).
_HIDDEN_DATA = ("text_link", "text_mention", "custom_emoji")


def telegram_trim(raw: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The text and entities as Telegram keeps them (tdlib's ``fix_formatted_text``).

    1. Spaces and newlines at the start of an entity are moved out of it
       (all but text links), and an entity of only whitespace is dropped: a
       ``pre`` whose first line is indented loses that indentation.
    2. The text ends at its last character that is not a space or newline;
       entities are cut there.
    3. Spaces and newlines at the start, before the first entity, are dropped.
    """
    units = raw.encode("utf-16-le")
    size = len(units) // 2

    def blank(at: int) -> bool:  # tdlib turns other control characters into spaces first
        return units[2 * at + 1] == 0 and units[2 * at] <= 0x20

    moved = []
    for e in entities:
        start, end = e["offset"], e["offset"] + e["length"]
        if e["type"] not in _HIDDEN_DATA:
            while start < end and blank(start):
                start += 1
        if any(not blank(at) for at in range(start, end)):
            moved.append({**e, "offset": start, "length": end - start})
    last = size
    while last > 0 and blank(last - 1):
        last -= 1
    first = 0
    first_entity = min((e["offset"] for e in moved), default=last)
    while first < min(first_entity, last) and blank(first):
        first += 1
    text = units[2 * first:2 * last].decode("utf-16-le")
    kept = []
    for e in moved:
        start, end = e["offset"] - first, min(e["offset"] + e["length"], last) - first
        if end > start:
            kept.append({**e, "offset": start, "length": end - start})
    return text, kept


def covered(text: str, entities: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each entity as (type, the text it covers)."""
    units = text.encode("utf-16-le")
    return [(e["type"], units[2 * e["offset"]:2 * (e["offset"] + e["length"])].decode("utf-16-le"))
            for e in entities]
