"""A conformance suite for platform plugins: the promises the core relies on.

The delivery core can only keep its guarantees if every plugin keeps a few
of its own: it implements the stream hooks its platform needs, a sent
message comes back as a ``MessageRef`` that edits work on, an edit to
identical text is success, a 429 becomes ``RateLimited``, a reply streamed
through the real core ends up on the screen exactly, every message's last
call is ``on_stream_end`` and shows its text, and no message keeps a cursor
when an edit fails. A plugin that sends media (``on_media``, with
``Platform(media=MediaLimits(...))``) also promises: an attachment arrives
once, after the text, with its bytes intact, also when the upload first
meets a 429 or times out after landing; and an item over its declared
limit is never uploaded but shown as one line. A client that can react
(``react``) puts the emoji on the person's message and turns a 429 into
``RateLimited``. Every kind of call into a chat — a text, the typing
indicator, an upload, a reaction, a question with buttons and its update —
that meets a 429 is made again through the core once ``retry_after`` has
passed, and shown once. A started client that reports its connection
(``PlatformContext.report_connected``) says "connected" against a working
emulator, "disconnected" (with why) while the harness breaks the
connection, and "connected" again once it is restored.
Describe how to reach your plugin and read its screen in a
:class:`Harness`, then run every check from your own tests::

    import pytest
    from hermes_gateway.testing.conformance import CHECKS, run_check

    @pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
    async def test_conformance(check):
        async with MyHarness() as harness:      # starts your emulator on 127.0.0.1
            await run_check(check, harness)

A check that does not apply (no edits, no way to inject a 429) raises
:class:`NotApplicable`, which ``run_check`` turns into a pytest skip.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
import warnings
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from .._core.config import Config, MediaConfig
from .._core.delivery import Delivery
from .._core.delivery.final import MOVED
from .._core.delivery.hooks import PlatformHooks, carried_client
from .._core.delivery.measure import measure_for
from .._core.delivery.split import reassemble
from .._core.errors import HermesError, RateLimited
from .._core.media import Media
from .._core.platform import MessageRef, Stream, StreamSettings
from .._core.plugins import implemented_hooks, missing_stream_hook, make_plugins

if TYPE_CHECKING:
    from .platforms import PlatformRunner

Check = Callable[["Harness"], Awaitable[None]]


class NotApplicable(HermesError):
    """This check does not apply to this platform."""


#: What the checks use a chat for, and the suffix of the chat id :meth:`Harness.make_chat` gives each by default.
CHAT_PURPOSES: dict[str, str] = {"main": "", "edit": "-edit", "long": "-long", "same": "-same", "429": "-429",
                                 "media": "-media", "react": "-react", "table": "-table", "choice": "-choice"}


class Harness:
    """How the suite reaches one platform plugin. Subclass it for yours.

    ``plugin`` is the plugin object or module, ``platform`` its platform
    name. ``async screen(chat_id)`` returns the texts of the bot's messages in that
    chat, top to bottom, as your emulator (or a real server) shows them now.
    ``inject_rate_limit`` makes the next call into the chat answer 429;
    ``inject_edit_failure`` makes the next edit fail for good. The checks
    use one chat per purpose (:data:`CHAT_PURPOSES`), each asked of
    :meth:`make_chat` once: by default ``chat_id`` plus a suffix
    (``conformance-1-edit``); a platform whose server chooses the ids (a
    Matrix room) overrides it to create the chat and return its id.

    For a plugin that sends media: ``attachments(chat_id)`` returns what
    the emulator received as attachments in that chat, in order, as
    ``(filename, bytes)`` pairs (required when the platform declares
    ``media``); ``inject_upload_timeout(chat_id, landed)`` makes the next
    upload into the chat time out, after taking effect when ``landed``
    (optional). ``inject_rate_limit`` is reused for uploads.

    For a platform whose client can react (a ``react`` method):
    ``person_message(chat_id, text)`` makes a person write ``text`` in the
    chat on the emulator and returns its message id (nothing needs to
    receive it); ``reactions(chat_id)`` returns the bot's reactions the
    emulator shows now, as ``{message_id: [emoji, ...]}``.
    """

    plugin: Any = None
    #: A started :class:`~hermes_gateway.testing.PlatformRunner` of a plugin whose platform has a client
    #: (``Platform(client=...)``); the checks then send through that client, built as the gateway builds it.
    runner: PlatformRunner | None = None
    platform: str = ""
    chat_id: str = "conformance-1"
    settings = StreamSettings(enabled=True, edit_interval=0.05, min_tokens=2)
    _media_dir: str | None = None  # made on first use, removed when the harness stops

    async def __aenter__(self) -> "Harness":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
        media_dir = self._media_dir
        if media_dir is not None:
            shutil.rmtree(media_dir, ignore_errors=True)
            self._media_dir = None

    async def start(self) -> None:
        """Start your emulator and point the plugin at it."""

    async def stop(self) -> None:
        """Stop what ``start`` started."""

    async def make_chat(self, purpose: str) -> str:
        """The id of a chat for the checks' ``purpose`` (a key of :data:`CHAT_PURPOSES`), made once per purpose.

        Override it when your emulator or server chooses chat ids: create the room there and return its id.
        """
        return self.chat_id + CHAT_PURPOSES[purpose]

    async def chat(self, purpose: str) -> str:
        """The chat the checks use for ``purpose``: :meth:`make_chat`'s answer, asked once per harness."""
        chats: dict[str, str] = self.__dict__.setdefault("_chats", {})
        if purpose not in chats:
            chats[purpose] = str(await self.make_chat(purpose))
        return chats[purpose]

    async def screen(self, chat_id: str) -> list[str]:
        """The texts of the bot's messages in the chat, top to bottom (async: it may ask a real server).

        A harness written for an older kit defines it with ``def``: that still works for one release, with
        a ``DeprecationWarning``.
        """
        raise NotImplementedError

    async def inject_rate_limit(self, chat_id: str, retry_after: float) -> None:
        raise NotApplicable("this harness cannot inject a 429")

    async def inject_typing_rate_limit(self, chat_id: str, retry_after: float) -> None:
        """Optional: the next typing indicator in the chat answers 429 (by default :meth:`inject_rate_limit`; a
        platform whose per-chat limit counts messages only may answer its bot-wide one instead)."""
        await self.inject_rate_limit(chat_id, retry_after)

    async def inject_edit_failure(self, chat_id: str) -> None:
        """Optional: make the next edit in the chat fail for good (``DeliveryError(retryable=False)``)."""
        raise NotApplicable("this harness cannot make an edit fail")

    async def break_connection(self) -> None:
        """Optional: make the platform unreachable for the started client (its poll fails, its websocket
        closes and reconnecting is refused) until :meth:`restore_connection`."""
        raise NotApplicable("this harness cannot break the client's connection")

    async def restore_connection(self) -> None:
        """End what :meth:`break_connection` did (nothing, for an outage that ends by itself)."""

    def attachments(self, chat_id: str) -> list[tuple[str, bytes]]:
        """The attachments the emulator received in the chat, in order: ``(filename, bytes)`` (may be async)."""
        raise NotImplementedError

    async def inject_upload_timeout(self, chat_id: str, landed: bool) -> None:
        """Optional: the next upload into the chat times out (having taken effect when ``landed``)."""
        raise NotApplicable("this harness cannot make an upload time out")

    async def person_message(self, chat_id: str, text: str) -> str:
        """A person's message in the chat (on the emulator); its id. Required when the client can react."""
        raise NotImplementedError

    def reactions(self, chat_id: str) -> dict[str, list[str]]:
        """The bot's reactions the chat shows now: message id -> emoji (may be async). Required when the client
        can react."""
        raise NotImplementedError

    # -- helpers the checks use ---------------------------------------------------------------

    def delivery(self) -> Delivery:
        if self.runner is not None:
            return self.runner.delivery(Config(media=MediaConfig(directory=self.media_directory())))
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[self.plugin])
        if plugins.problems:
            raise AssertionError(f"the plugin does not load: {plugins.problems[0]}")
        return Delivery(plugins, Config(media=MediaConfig(directory=self.media_directory())))

    def media_directory(self) -> str:
        """A media directory of this harness's own (removed when it stops)."""
        if self._media_dir is None:
            self._media_dir = tempfile.mkdtemp(prefix="hermes-conformance-media-")
        return self._media_dir

    async def stream_reply(self, text: str, chat_id: str | None = None, pieces: int = 40,
                           delivery: Delivery | None = None, before_finish: Any = None) -> Any:
        session = (delivery or self.delivery()).session(self.platform, chat_id or await self.chat("main"),
                                                        settings=self.settings)
        step = max(1, len(text) // pieces)
        for start in range(0, len(text), step):
            session.feed(text[start:start + step])
            await _pause(0.01)
        if before_finish is not None:
            await before_finish()
        return await session.finish()


class _HookLog:
    """Wraps a platform's hooks to record, per message, the hook and text of its last successful call."""

    def __init__(self, hooks: PlatformHooks) -> None:
        self.last: dict[str, tuple[str, str]] = {}
        call = hooks.call

        async def recorded(name: str, **kwargs: Any) -> Any:
            result = await call(name, **kwargs)
            ref = result if isinstance(result, MessageRef) else kwargs.get("message")
            if name in ("on_delta", "on_stream_end") and isinstance(ref, MessageRef):
                self.last[ref.message_id] = (name, kwargs["text"])
            return result

        hooks.call = recorded  # type: ignore[method-assign]


async def _screen(h: Harness, chat_id: str) -> list[str]:
    """``h.screen(chat_id)``, awaited; a harness's sync ``screen`` still works, with a deprecation warning."""
    shown = h.screen(chat_id)
    if inspect.isawaitable(shown):
        return list(await shown)
    warnings.warn(f"{type(h).__name__}.screen() is a plain function: define it as `async def screen(self, "
                  f"chat_id)`; a sync screen is read for one more release", DeprecationWarning, stacklevel=2)
    return list(shown)


async def _attachments(h: Harness, chat_id: str) -> list[tuple[str, bytes]]:
    found = h.attachments(chat_id)
    return list(await found) if inspect.isawaitable(found) else list(found)


async def _reactions(h: Harness, chat_id: str) -> dict[str, list[str]]:
    found = h.reactions(chat_id)
    return dict(await found) if inspect.isawaitable(found) else dict(found)


async def _pause(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def same_text(screen: list[str], reply: str) -> bool:
    """The screen shows the reply: the same words in order, fences closed and reopened undone.

    Platforms such as Telegram trim the whitespace at the edges of every
    message, so the space or newline at a cut is not compared.
    """
    return reassemble(screen, sep="\n").split() == reply.split()


def _reply(words: int) -> str:
    return " ".join(f"word{i}" + ("." if i % 12 == 11 else "") for i in range(words))


async def check_a_streamed_reply_lands_exactly(h: Harness) -> None:
    """The core's previews and final edit leave exactly the reply on screen."""
    limit = h.delivery().hooks(h.platform).platform.max_message_length
    reply = _reply(max(10, min(60, limit * 2 // 7)))  # about two messages on a small platform
    report = await h.stream_reply(reply)
    assert report.delivered, report.error
    assert same_text(await _screen(h, await h.chat("main")), reply), await _screen(h, await h.chat("main"))


async def check_previews_edit_one_message(h: Harness) -> None:
    """Previews are edits of the first message, not a trail of new ones."""
    delivery = h.delivery()
    session = delivery.session(h.platform, await h.chat("edit"), settings=h.settings)
    if not await session.hooks.supports_edit(session.stream):
        raise NotApplicable("the platform cannot edit")
    reply = _reply(max(3, session.hooks.platform.max_message_length // 10))  # fits one message
    report = await h.stream_reply(reply, chat_id=await h.chat("edit"))
    assert report.delivered, report.error
    assert await _screen(h, await h.chat("edit")) == [reply]
    assert report.calls >= 2, "a streamed reply is shown before it ends"


async def check_overflow_fits_the_limit(h: Harness) -> None:
    """A reply longer than one message is split, every message within the platform's limit."""
    delivery = h.delivery()
    platform = delivery.hooks(h.platform).platform
    measure = measure_for(platform.length_unit)
    words = platform.max_message_length * 5 // 2 // 7
    reply = _reply(words)
    report = await h.stream_reply(reply, chat_id=await h.chat("long"), pieces=60)
    assert report.delivered, report.error
    screen = await _screen(h, await h.chat("long"))
    assert len(screen) >= 3
    assert all(measure(text) <= platform.max_message_length for text in screen)
    assert same_text(screen, reply), screen


async def check_an_identical_edit_is_success(h: Harness) -> None:
    """Editing a message to the text it already shows is not an error ("not modified")."""
    hooks = h.delivery().hooks(h.platform)
    stream = Stream(platform=hooks.platform, chat_id=await h.chat("same"), settings=h.settings)
    if not await hooks.supports_edit(stream):
        raise NotApplicable("the platform cannot edit")
    ref = await hooks.call("on_delta", stream=stream, message=None, text="same text")
    assert isinstance(ref, MessageRef), f"on_delta returned {ref!r}, not a MessageRef"
    again = await hooks.call("on_stream_end", stream=stream, message=ref, text="same text")
    assert isinstance(again, MessageRef)
    assert await _screen(h, await h.chat("same")) == ["same text"]


async def check_a_429_becomes_rate_limited(h: Harness) -> None:
    """The platform's flood error reaches the core as RateLimited with its retry_after."""
    hooks = h.delivery().hooks(h.platform)
    chat = await h.chat("429")
    stream = Stream(platform=hooks.platform, chat_id=chat, settings=h.settings)
    await h.inject_rate_limit(chat, 7)
    try:
        await hooks.call("on_stream_end", stream=stream, message=None, text="too soon")
    except RateLimited as exc:
        assert abs(exc.retry_after - 7) < 1.0, exc.retry_after
    else:
        raise AssertionError("a 429 from the platform did not raise hermes_gateway.RateLimited")
    assert await _screen(h, chat) == []


async def check_the_plugin_implements_the_stream_hooks_it_needs(h: Harness) -> None:
    """on_stream_end always; on_delta when it can edit or appends: else the core refuses to load it."""
    if h.runner is not None:  # the client was built: the core checked its methods then
        assert h.runner.client is not None, "the platform's factory returned no client"
        assert callable(getattr(h.runner.client, "on_stream_end", None)) or \
            "on_stream_end" in implemented_hooks(h.runner.registered.plugin), "no on_stream_end"
        return
    missing = missing_stream_hook(set(implemented_hooks(h.plugin)))
    own = carried_client(h.plugin)  # a plugin object carrying its client (the reference platform)
    if missing is not None and own is not None:
        missing = None if callable(getattr(own, "on_stream_end", None)) else "on_stream_end"
    assert missing is None, f"the plugin registers a platform but does not implement {missing}"
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[h.plugin])
    assert plugins.problems == [], plugins.problems[0]
    assert h.platform in plugins.platforms(), f"the plugin did not register platform {h.platform!r}"


async def check_every_message_ends_with_on_stream_end(h: Harness) -> None:
    """Each message's last call is on_stream_end — overflowed ones too — and the screen shows its text."""
    delivery = h.delivery()
    log = _HookLog(delivery.hooks(h.platform))
    limit = delivery.hooks(h.platform).platform.max_message_length
    chat = await h.chat("long")
    reply = _reply(max(10, min(200, limit * 5 // 2 // 7)))  # two or three messages on a small platform
    report = await h.stream_reply(reply, chat_id=chat, delivery=delivery)
    assert report.delivered, report.error
    assert log.last, "no message was sent"
    assert all(hook == "on_stream_end" for hook, _ in log.last.values()), log.last
    assert sorted(text for _, text in log.last.values()) == sorted(await _screen(h, chat)), \
        "on_stream_end's text is not what the message shows"


async def check_no_cursor_stays_when_an_edit_fails(h: Harness) -> None:
    """A final edit refused for good: no message keeps the cursor, and the reply is still all there once."""
    delivery = h.delivery()
    chat = await h.chat("edit")
    session = delivery.session(h.platform, chat, settings=h.settings)
    if not await session.hooks.supports_edit(session.stream):
        raise NotApplicable("the platform cannot edit")
    limit = session.hooks.platform.max_message_length
    reply = _reply(max(4, min(40, limit // 10)))  # fits one message
    report = await h.stream_reply(reply, chat_id=chat, delivery=delivery,
                                  before_finish=lambda: h.inject_edit_failure(chat))
    screen = await _screen(h, chat)
    cursor = h.settings.cursor.strip()
    assert report.delivered, report.error
    assert not any(text.rstrip().endswith(cursor) for text in screen if cursor), screen
    assert same_text([t for t in screen if t != MOVED], reply), screen


# -- media: only for a plugin whose platform declares media (and so implements on_media) ---------------------

#: A tiny valid PNG: the bytes every media check sends and expects back intact.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000b49444154789c6360000200000500017a5eab3f0000000049454e44ae426082")


async def _media_platform(h: Harness, delivery: Delivery) -> Any:
    platform = delivery.hooks(h.platform).platform
    if platform.media is None:
        raise NotApplicable("the platform declares no media")
    try:
        await _attachments(h, await h.chat("media"))
    except NotImplementedError:
        raise AssertionError("the platform declares media: the harness must implement attachments(chat_id), "
                             "what the emulator received") from None
    return platform


def _item(platform: Any) -> Media:
    kind = "image" if "image" in platform.media.kinds else "document"
    return Media(data=PNG, mime="image/png", filename="conformance.png", caption="A picture",
                 kind=kind)  # type: ignore[arg-type]


async def _send_media(h: Harness, delivery: Delivery, text: str, media: list[Media]) -> Any:
    session = delivery.session(h.platform, await h.chat("media"), settings=h.settings)
    return await session.finish(text, media)


async def check_an_attachment_arrives_once_after_the_text(h: Harness) -> None:
    """A tool's image reaches the chat as an attachment, bytes intact, once, after the reply's text."""
    delivery = h.delivery()
    platform = await _media_platform(h, delivery)
    report = await _send_media(h, delivery, "Here is the picture.", [_item(platform)])
    chat = await h.chat("media")
    assert report.delivered, report.error
    assert await _attachments(h, chat) == [("conformance.png", PNG)], await _attachments(h, chat)
    assert len(report.media) == 1 and report.media_notes == [], report
    assert any("Here is the picture." in text for text in await _screen(h, chat)), await _screen(h, chat)


async def check_an_upload_after_a_429_is_sent_once(h: Harness) -> None:
    """An upload answered with 429 raises RateLimited; the core waits, and the item arrives exactly once."""
    delivery = h.delivery()
    platform = await _media_platform(h, delivery)
    chat = await h.chat("media")
    await h.inject_rate_limit(chat, 1)
    report = await _send_media(h, delivery, "", [_item(platform)])  # no text: the upload is the first call
    assert report.delivered, report.error
    assert report.rate_limited >= 1, "the 429 did not reach the core as RateLimited"
    assert await _attachments(h, chat) == [("conformance.png", PNG)], await _attachments(h, chat)


async def check_an_upload_that_may_have_landed_is_not_repeated(h: Harness) -> None:
    """A timeout after the upload took effect raises DeliveryError(maybe_delivered=True): no second copy."""
    delivery = h.delivery()
    platform = await _media_platform(h, delivery)
    chat = await h.chat("media")
    await h.inject_upload_timeout(chat, landed=True)
    report = await _send_media(h, delivery, "", [_item(platform)])
    assert await _attachments(h, chat) == [("conformance.png", PNG)], await _attachments(h, chat)
    assert report.media_uncertain == 1, "the timeout did not reach the core as maybe_delivered"


async def check_an_item_over_the_limit_is_a_line_not_an_upload(h: Harness) -> None:
    """An item over every limit the platform declares is never uploaded; the person sees one line instead."""
    delivery = h.delivery()
    platform = await _media_platform(h, delivery)
    limits = platform.media
    declared = [limits.limit_for(kind) for kind in limits.kinds]
    if not declared or None in declared:
        raise NotApplicable("the platform declares no size limit for some kind it sends")
    kind = sorted(limits.kinds)[0]
    suffix = {"image": "png", "video": "mp4", "audio": "mp3", "document": "pdf"}[kind]
    big = f"{h.media_directory()}/big.{suffix}"
    with open(big, "wb") as out:
        out.truncate(max(declared) + 1)  # sparse: one byte over the largest limit, nothing written
    report = await _send_media(h, delivery, "Too big:", [Media(path=big)])
    chat = await h.chat("media")
    assert report.delivered, report.error
    assert await _attachments(h, chat) == [], await _attachments(h, chat)
    line = f"📎 big.{suffix} (too large for {platform.name})"
    assert any(line in text for text in await _screen(h, chat)), await _screen(h, chat)


async def check_a_reaction_lands_on_the_persons_message(h: Harness) -> None:
    """``react`` puts the emoji on the person's message; a second status is shown too; a 429 is RateLimited."""
    client = h.runner.client if h.runner is not None else None
    react = getattr(client, "react", None)
    if not callable(react):
        raise NotApplicable("the platform's client has no react method")
    chat = await h.chat("react")
    message_id = await h.person_message(chat, "hello bot")
    allowed = getattr(client, "reaction_emoji", None)
    for emoji in ("👀", "👍"):
        assert allowed is None or emoji in allowed, f"{emoji} is not in the client's reaction_emoji"
        await react(chat_id=chat, message_id=message_id, emoji=emoji, thread_id=None)
    shown = (await _reactions(h, chat)).get(message_id, [])
    assert "👍" in shown, f"the chat shows {await _reactions(h, chat)!r} after react(👍) on message {message_id}"
    try:
        await h.inject_rate_limit(chat, 7)
    except NotApplicable:
        return
    try:
        await react(chat_id=chat, message_id=message_id, emoji="👀", thread_id=None)
    except RateLimited as exc:
        assert abs(exc.retry_after - 7) < 1.0, exc.retry_after
    else:
        raise AssertionError("a 429 on a reaction did not raise hermes_gateway.RateLimited")


TABLE_REPLY = ("The plan:\n\n| Step | Owner | When | State | Note |\n|---|---|---|---|---|\n"
               "| build | Ada | Monday | done | fast |\n| ship | Lin | Friday | open | review first |\n\nThat is all.")


async def check_a_table_is_laid_out_not_shown_raw(h: Harness) -> None:
    """A platform that renders Markdown lays a table out (``hermes_gateway.rewrite_tables``): no row of pipes shows."""
    platform = h.delivery().hooks(h.platform).platform
    if platform.rendered_length is None:
        raise NotApplicable("the platform shows the text as sent (it declares no rendered_length)")
    report = await h.stream_reply(TABLE_REPLY, chat_id=await h.chat("table"))
    assert report.delivered, report.error
    shown = "\n".join(await _screen(h, await h.chat("table")))
    assert "build" in shown and "Friday" in shown, shown
    assert not any(line.lstrip().startswith("|") for line in shown.splitlines()), f"a raw table: {shown!r}"


async def check_a_choice_is_shown_and_closed(h: Harness) -> None:
    """``offer_choice`` shows the question (a ``MessageRef`` back); ``close_choice`` turns it into the outcome
    (or, on a platform that cannot edit, sends the outcome after it)."""
    from .._core.messages.choice import Choice, ChoiceOption
    from .._core.platform import MessageRef

    client = h.runner.client if h.runner is not None else None
    if client is None or not callable(getattr(client, "offer_choice", None)) \
            or not callable(getattr(client, "close_choice", None)):
        raise NotApplicable("the platform shows no buttons (offer_choice/close_choice)")
    chat = await h.chat("choice")
    stream = h.delivery().session(h.platform, chat, settings=h.settings).stream
    choice = Choice("c0nf1g", "Approve running the tool x?", (ChoiceOption("approve", "Approve", "primary"),
                                                              ChoiceOption("deny", "Deny", "danger")))
    assert len(choice.payload("approve").encode()) <= 64
    ref = await client.offer_choice(stream, choice)
    assert isinstance(ref, MessageRef), ref
    assert await _screen(h, chat) == [choice.prompt], await _screen(h, chat)
    await client.close_choice(stream, ref, "Approved.")
    assert await _screen(h, chat) in (["Approved."], [choice.prompt, "Approved."]), await _screen(h, chat)


#: Seconds of the 429s the checks below inject (short: the suite runs in real time).
WAIT = 1.0
#: What a platform may round off a 429's wait by (the core waits what the platform says; Telegram says whole seconds).
ROUNDING = 0.05


def _choice_client(h: Harness) -> Any:
    client = h.runner.client if h.runner is not None else None
    if client is None or not callable(getattr(client, "offer_choice", None)) \
            or not callable(getattr(client, "close_choice", None)):
        raise NotApplicable("the platform shows no buttons (offer_choice/close_choice)")
    return client


async def check_a_choice_after_a_429_is_shown_after_the_wait(h: Harness) -> None:
    """A 429 on a question with buttons, and on the update that closes it: through the core's one path of calls
    into a chat (``Delivery.call``, what approvals use) each is made again once ``retry_after`` has passed, once."""
    import asyncio

    from .._core.messages.choice import Choice, ChoiceOption

    client = _choice_client(h)
    chat = await h.chat("choice")
    delivery = h.delivery()
    stream = delivery.session(h.platform, chat, settings=h.settings).stream
    choice = Choice("c0nf429", "Approve running the tool y?", (ChoiceOption("approve", "Approve", "primary"),
                                                               ChoiceOption("deny", "Deny", "danger")))
    loop = asyncio.get_running_loop()
    await h.inject_rate_limit(chat, WAIT)
    start = loop.time()
    shown = await delivery.call(h.platform, chat, lambda: client.offer_choice(stream, choice), what="a choice")
    assert shown.ok and isinstance(shown.value, MessageRef), f"the buttons were not shown after a 429: {shown}"
    assert loop.time() - start >= WAIT - ROUNDING, "the question was sent again before the 429's retry_after"
    assert await _screen(h, chat) == [choice.prompt], await _screen(h, chat)
    ref = shown.value
    await h.inject_rate_limit(chat, WAIT)
    start = loop.time()
    closed = await delivery.call(h.platform, chat, lambda: client.close_choice(stream, ref, "Approved."),
                                 what="a choice's outcome")
    assert closed.ok, f"the question was not closed after a 429: {closed}"
    assert loop.time() - start >= WAIT - ROUNDING, "the question was updated again before the 429's retry_after"
    assert await _screen(h, chat) in (["Approved."], [choice.prompt, "Approved."]), await _screen(h, chat)


async def check_a_reaction_after_a_429_is_set_after_the_wait(h: Harness) -> None:
    """A status reaction that meets a 429 is set once ``retry_after`` has passed (the core's reactions)."""
    import asyncio

    from .._core.messages.incoming import Incoming
    from .._core.reactions.reactor import Reactor
    from .._core.settings.reactions import ReactionSettings

    client = h.runner.client if h.runner is not None else None
    if not callable(getattr(client, "react", None)):
        raise NotApplicable("the platform's client has no react method")
    chat = await h.chat("react")
    message_id = await h.person_message(chat, "hello bot")
    reactor = Reactor(ReactionSettings(received="👀", done=None, failed=None), h.delivery())
    loop = asyncio.get_running_loop()
    await h.inject_rate_limit(chat, WAIT)
    start = loop.time()
    reactor.mark(Incoming(h.platform, chat, "hello bot", message_id=message_id), "received")
    await _until(lambda: "👀" in h.reactions(chat).get(message_id, []), 10 * WAIT + 5)
    assert "👀" in h.reactions(chat).get(message_id, []), f"no 👀 after a 429: {h.reactions(chat)!r}"
    assert loop.time() - start >= WAIT - ROUNDING, "the reaction was sent again before the 429's retry_after"
    await reactor.close()


async def check_typing_that_meets_a_429_holds_the_chat(h: Harness) -> None:
    """A 429 on the typing indicator: no call into the chat until ``retry_after`` has passed; the reply is whole."""
    import asyncio

    delivery = h.delivery()
    if not delivery.hooks(h.platform).implements["on_stream_start"]:
        raise NotApplicable("the platform shows no typing indicator (no on_stream_start)")
    chat = await h.chat("429")
    try:  # a platform may show typing on the person's message (WhatsApp)
        reply_to: str | None = await h.person_message(chat, "are you there?")
    except NotImplementedError:
        reply_to = None
    session = delivery.session(h.platform, chat, settings=StreamSettings(enabled=False), reply_to=reply_to)
    loop = asyncio.get_running_loop()
    await h.inject_typing_rate_limit(chat, WAIT)
    session.start()

    def blocked() -> int:  # a 429 blocks the chat's budget, or the bot's for a bot-wide one
        bot = session.bot_budget
        return session.budget.rate_limited + (bot.rate_limited if bot is not None else 0)
    await _until(lambda: blocked() > 0, 10 * WAIT + 5)
    assert blocked() > 0, "the typing indicator's 429 did not reach the core as RateLimited"
    limited = loop.time()
    report = await session.finish("Typed after the wait.")
    assert report.delivered, report.error
    assert loop.time() - limited >= WAIT - ROUNDING - 0.1, "the reply's text went before the 429's retry_after"
    assert await _screen(h, chat) == ["Typed after the wait."], await _screen(h, chat)


async def check_a_text_after_a_429_arrives_once(h: Harness) -> None:
    """A 429 on a message sent through the core (``hermes-gateway send``, a short answer): it arrives once, after
    the wait."""
    import asyncio

    delivery = h.delivery()
    chat = await h.chat("429")
    loop = asyncio.get_running_loop()
    await h.inject_rate_limit(chat, WAIT)
    start = loop.time()
    report = await delivery.session(h.platform, chat, settings=h.settings).finish("Sent after the wait.")
    assert report.delivered, report.error
    assert report.rate_limited >= 1, "the 429 did not reach the core as RateLimited"
    assert loop.time() - start >= WAIT - ROUNDING, "the text was sent again before the 429's retry_after"
    assert await _screen(h, chat) == ["Sent after the wait."], await _screen(h, chat)


#: Seconds a check waits for a client's connection report (a websocket's READY, a reconnect's backoff).
CONNECTION_WAIT = 60.0
#: Seconds a started client gets to make its first report (in or just after its start()) before the check
#: decides it reports nothing.
FIRST_REPORT_WAIT = 5.0


async def check_a_started_client_reports_its_connection(h: Harness) -> None:
    """Against a working emulator a client that reports its connection says "connected"; while the harness
    breaks the connection it says "disconnected" with a reason, and "connected" again once restored.

    A client that reports nothing is shown by the dashboard as ``running`` (never ``connected``): that is
    allowed, and this check does not apply to it.
    """
    runner = h.runner
    context = runner.context if runner is not None else None
    if runner is None or context is None or not runner.started:
        raise NotApplicable("the harness does not start the client (nothing connects)")
    await _until(lambda: context.connection is not None, FIRST_REPORT_WAIT)
    if context.connection is None:
        raise NotApplicable("the client reports nothing of its connection (the dashboard shows it as running)")
    await _until(lambda: context.connection == "connected", CONNECTION_WAIT)
    assert context.connection == "connected", (context.connection, context.connection_error)
    try:
        await h.break_connection()
    except NotApplicable:
        return  # reaching the platform was checked; this harness cannot take it away
    await _until(lambda: context.connection == "disconnected", CONNECTION_WAIT)
    assert context.connection == "disconnected" and context.connection_error, "the outage was not reported"
    await h.restore_connection()
    await _until(lambda: context.connection == "connected", CONNECTION_WAIT)
    assert context.connection == "connected", ("not back after the outage", context.connection_error)


async def _until(condition: Callable[[], bool], timeout: float) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition() and loop.time() < deadline:
        await asyncio.sleep(0.02)


CHECKS: tuple[Check, ...] = (
    check_the_plugin_implements_the_stream_hooks_it_needs,
    check_a_streamed_reply_lands_exactly,
    check_previews_edit_one_message,
    check_overflow_fits_the_limit,
    check_an_identical_edit_is_success,
    check_a_429_becomes_rate_limited,
    check_every_message_ends_with_on_stream_end,
    check_no_cursor_stays_when_an_edit_fails,
    check_an_attachment_arrives_once_after_the_text,
    check_an_upload_after_a_429_is_sent_once,
    check_an_upload_that_may_have_landed_is_not_repeated,
    check_an_item_over_the_limit_is_a_line_not_an_upload,
    check_a_reaction_lands_on_the_persons_message,
    check_a_table_is_laid_out_not_shown_raw,
    check_a_choice_is_shown_and_closed,
    check_a_choice_after_a_429_is_shown_after_the_wait,
    check_a_reaction_after_a_429_is_set_after_the_wait,
    check_typing_that_meets_a_429_holds_the_chat,
    check_a_text_after_a_429_arrives_once,
    check_a_started_client_reports_its_connection,
)


async def run_check(check: Check, harness: Harness) -> None:
    """Run one check; a check that does not apply becomes a pytest skip."""
    try:
        await check(harness)
    except NotApplicable as exc:
        import pytest

        pytest.skip(str(exc))
