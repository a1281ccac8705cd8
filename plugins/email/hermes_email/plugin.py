"""The email platform: each thread a conversation, each reply one mail in it.

:class:`EmailClient` reads the folder over IMAP — IDLE when the server
offers it, else every ``poll_interval`` — and hands each new mail of a
person to the core; the reply goes out over SMTP as one threaded mail
(email cannot edit: ``supports_edit`` is false, the core sends the final
text once). What is never answered (RFC 3834): automatic mail
(``Auto-Submitted`` other than ``no``), ``Precedence: bulk/list/junk``,
mailing lists (``List-Id``/``List-Unsubscribe``), bounces (``Return-Path:
<>``, ``MAILER-DAEMON``), senders outside ``allowed_senders``, and a
sender's mail past ``replies_per_sender_per_hour`` (two auto-responders
never loop). A mail turns ``\\Seen`` only after its reply went out: a
crash in between leaves it unseen, and the core's recovery answers it
once (a reply that sent nothing is answered again after a crash).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any, Literal

import hermes_gateway
from hermes_gateway import (Attachment, DeliveryError, Incoming, Media, MediaLimits, MessageRef, Platform,
                            PlatformClient, PlatformContext, RateBudget, Stream, markdown_keep_whole,
                            scrub_secrets)

from . import outbound, smtp
from .doctor import doctor
from .imap import ImapError, Mailbox
from .inbound import MACHINE_SENDER, Mail, Unreadable, parse_mail
from .settings import EmailSettings

log = logging.getLogger(__name__)

NAME = "email"
#: Longer replies are split into several mails of the thread (a mail has no hard limit; readers do).
MAX_MESSAGE_CHARS = 20_000
#: Our own pacing (SMTP has no per-thread limit; providers limit per account: rate_limits overrides it).
BUDGETS = {"default": RateBudget(rate=1.0, burst=5)}
BOT_BUDGET = RateBudget(rate=1.0, burst=10)
#: A provider's common 25 MB message limit, less base64's third.
MEDIA = MediaLimits(kinds=frozenset({"image", "document", "audio", "video"}),
                    max_bytes={k: 18_000_000 for k in ("image", "document", "audio", "video")},
                    caption_length=10_000)
#: Threads whose recipient and references are kept (the oldest are forgotten past it: the store's 1 MiB).
MAX_THREADS = 400
POSITION = "position"
THREADS = "threads"
HOUR = 3600.0


def _thread_key(chat_id: str) -> str:
    return f"thread:{chat_id}"


def _kind(mime: str) -> Literal["image", "audio", "video", "document"]:
    top = mime.split("/", 1)[0]
    if top == "image":
        return "image"
    if top == "audio":
        return "audio"
    return "video" if top == "video" else "document"


class EmailClient(PlatformClient):
    """Reads one mailbox and answers its mails, for one run of the gateway."""

    settings: EmailSettings

    def __init__(self, settings: EmailSettings, context: PlatformContext) -> None:
        super().__init__(settings, context)
        self._receiver: asyncio.Task[None] | None = None
        self._taken: dict[str, deque[float]] = {}   # sender -> times their mails were handed over, last hour
        self._wake = asyncio.Event()

    # ---------------------------------------------------------------- receiving

    async def start(self) -> None:
        where = self.settings.imap
        if not where.tls and where.host not in ("127.0.0.1", "localhost", "::1"):
            log.warning("email: %s reads %s without TLS (aioimaplib has no STARTTLS): prefer imaps://",
                        NAME, where.host)
        self._receiver = asyncio.get_running_loop().create_task(self._receive_forever(), name="email-imap")

    async def stop(self) -> None:
        receiver, self._receiver = self._receiver, None
        if receiver is not None:
            receiver.cancel()
            await asyncio.wait({receiver}, timeout=5.0)  # its IMAP session closes within that (bounded)

    async def _receive_forever(self) -> None:
        backoff = 1.0
        while True:
            try:
                box = await Mailbox.open(self.settings)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._disconnected(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
                continue
            try:
                self.context.report_connected()
                backoff = 1.0
                while True:
                    await self._take_new(box)
                    if box.idle:
                        await box.wait_for_news(self.settings.idle_timeout)
                    else:
                        try:
                            await asyncio.wait_for(self._wake.wait(), self.settings.poll_interval)
                        except TimeoutError:
                            pass
                        self._wake.clear()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the connection dropped, a command failed: open a new session
                self._disconnected(exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
            finally:
                await asyncio.shield(asyncio.wait_for(box.close(), 3.0))

    def _disconnected(self, exc: BaseException) -> None:
        why = scrub_secrets(f"{type(exc).__name__}: {exc}")[:200]
        log.warning("email: IMAP: %s", why)
        self.context.report_disconnected(f"IMAP: {why}")

    async def _take_new(self, box: Mailbox) -> None:
        """Hand the folder's new mails to the core, oldest first; the position moves past each one taken."""
        while True:
            position = await self.context.get_value(POSITION, {}) or {}
            last = int(position.get("last_uid", 0)) if position.get("uidvalidity") == box.uidvalidity else 0
            news = await box.new_mails(last)
            if not news and not box.grew:  # else a mail came in while searching: look again before idling
                return
            for uid, size in news:
                await self._take_one(box, uid, size)
                await self.context.set_value(POSITION, {"uidvalidity": box.uidvalidity, "last_uid": uid})

    async def _take_one(self, box: Mailbox, uid: int, size: int) -> None:
        """One mail: answered, or one log line saying why not (a hostile mail costs that line, never the loop)."""
        settings = self.settings
        if size > settings.max_message_bytes:
            return self._skip("oversized", f"mail UID {uid} ({size} bytes) is over max_message_bytes "
                                           f"({settings.max_message_bytes}): not read, not answered")
        try:
            raw = await box.fetch(uid)
        except ImapError:
            raise
        if len(raw) > settings.max_message_bytes:
            return self._skip("oversized", f"mail UID {uid} is over max_message_bytes: not answered")
        try:
            mail = await asyncio.to_thread(parse_mail, raw, f"<uid-{box.uidvalidity}-{uid}@{settings.domain}>")
        except Unreadable as exc:
            return self._skip("malformed", f"mail UID {uid} not answered: {exc}")
        except Exception as exc:  # a parser bug on a stranger's bytes: the mail's line, not the loop's end
            return self._skip("malformed", f"mail UID {uid} not answered: {type(exc).__name__}")
        if mail.automatic:
            return self._skip("automatic", f"mail {mail.message_id[:80]} from {mail.sender} not answered: "
                                           f"{mail.automatic} (RFC 3834)")
        if mail.sender == settings.address.lower():
            return self._skip("own", f"mail {mail.message_id[:80]} is the bot's own: not answered")
        if not settings.allows(mail.sender):
            return self._skip("not_allowed", f"mail from {mail.sender} not answered: not in allowed_senders")
        if not self._within_bound(mail.sender):
            return self._skip("loop_guard", f"mail from {mail.sender} not answered: "
                                            f"{settings.replies_per_sender_per_hour} replies in the last hour "
                                            "(replies_per_sender_per_hour)")
        await self._remember_thread(mail)
        self.context.count("mail")
        self.context.receive(Incoming(
            platform=self.context.platform, chat_id=mail.chat_id, text=mail.text or mail.subject,
            sender_id=mail.sender, update_id=mail.message_id, message_id=mail.message_id, chat_kind="private",
            attachments=tuple(Attachment(_kind(f.mime), f.chunks, mime=f.mime, size=f.size, filename=f.filename)
                              for f in mail.files)))

    def _skip(self, event: str, line: str) -> None:
        self.context.count(event)
        log.info("email: %s", line)

    def _within_bound(self, sender: str) -> bool:
        now = time.monotonic()
        times = self._taken.setdefault(sender, deque())
        while times and now - times[0] > HOUR:
            times.popleft()
        if len(times) >= self.settings.replies_per_sender_per_hour:
            return False
        times.append(now)
        if len(self._taken) > 10_000:  # forget senders quiet for an hour
            for quiet in [s for s, t in self._taken.items() if not t or now - t[-1] > HOUR]:
                del self._taken[quiet]
        return True

    async def _remember_thread(self, mail: Mail) -> None:
        """Who the thread's replies go to, its subject and ids: kept in the store, so a restart can answer."""
        try:
            await self.context.set_value(_thread_key(mail.chat_id), {
                "to": mail.sender, "subject": mail.subject, "refs": list(mail.references[-20:])})
            threads = [t for t in await self.context.get_value(THREADS, []) or [] if t != mail.chat_id]
            threads.append(mail.chat_id)
            for old in threads[:-MAX_THREADS]:
                await self.context.delete_value(_thread_key(old))
            await self.context.set_value(THREADS, threads[-MAX_THREADS:])
        except ValueError as exc:  # the store's bound for one platform's values
            log.warning("email: thread %s not kept: %s", mail.chat_id, exc)

    # ---------------------------------------------------------------- sending (called by the core)

    def supports_edit(self, stream: Stream) -> bool:
        return False  # a sent mail cannot change: the core sends each reply once, whole

    async def on_delta(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        """Not called while ``supports_edit`` is false; the contract wants it beside ``supports_edit``."""
        return await self.on_stream_end(stream, message, text)

    async def on_stream_end(self, stream: Stream, message: MessageRef | None, text: str) -> MessageRef:
        if message is not None:
            raise DeliveryError("email cannot change a mail it sent", retryable=False)
        thread, references = await self._thread(stream)
        mail = outbound.compose(sender=self.settings.address, to=thread["to"], subject=thread["subject"],
                                references=references, text=text, domain=self.settings.domain)
        await smtp.send(self.settings, mail, thread["to"])
        await self._mark_answered(stream)
        return MessageRef(stream.chat_id, str(mail["Message-ID"]), stream.thread_id)

    async def on_media(self, stream: Stream, media: Media) -> MessageRef:
        """A tool's file: a mail of its own in the thread (after the reply's text), the caption as its words."""
        thread, references = await self._thread(stream)
        filename = media.filename or "attachment"
        mail = outbound.compose(sender=self.settings.address, to=thread["to"], subject=thread["subject"],
                                references=references, text=media.caption or f"📎 {filename}",
                                domain=self.settings.domain)
        outbound.attach(mail, filename, media.mime or "application/octet-stream", media.read())
        await smtp.send(self.settings, mail, thread["to"])
        return MessageRef(stream.chat_id, str(mail["Message-ID"]), stream.thread_id)

    async def _thread(self, stream: Stream) -> tuple[dict[str, Any], list[str]]:
        thread = await self.context.get_value(_thread_key(stream.chat_id))
        if not isinstance(thread, dict) or not thread.get("to"):
            raise DeliveryError(f"email: no mail of thread {stream.chat_id} is known here (a reply answers a mail)",
                                retryable=False)
        if MACHINE_SENDER.match(str(thread["to"])):
            raise DeliveryError("email: never sent to a machine's address (RFC 3834)", retryable=False)
        references = list(thread.get("refs") or [])
        if stream.reply_to and stream.reply_to in references:  # threaded under the mail answered
            references = references[:references.index(stream.reply_to) + 1]
        return thread, references

    async def _mark_answered(self, stream: Stream) -> None:
        """The mail answered turns \\Seen now that its reply went out (once per reply)."""
        if not stream.reply_to or stream.state.get("seen"):
            return
        stream.state["seen"] = True
        try:
            box = await Mailbox.open(self.settings)
            try:
                await box.mark_seen(stream.reply_to)
            finally:
                await box.close()
        except Exception as exc:  # the reply went out; at worst the mail stays unseen (the core dedupes it)
            log.warning("email: mail %s not marked \\Seen: %s", stream.reply_to[:80],
                        scrub_secrets(f"{type(exc).__name__}: {exc}")[:200])


#: Email as the core sees it: limits, settings, and the client factory.
PLATFORM = Platform(
    name=NAME, max_message_length=MAX_MESSAGE_CHARS, length_unit="chars", edit_interval=0.0,
    budgets=dict(BUDGETS), bot_budget=BOT_BUDGET, media=MEDIA, settings=EmailSettings, client=EmailClient,
    description="Email (IMAP in with aioimaplib, SMTP out with aiosmtplib)", doctor=doctor,
    rendered_length=outbound.plain_length, keep_whole=markdown_keep_whole,
)


class EmailPlugin:
    """The plugin object the entry point registers: it declares the platform, nothing more."""

    __name__ = "hermes_email"

    @hermes_gateway.hookimpl
    def register_platforms(self, register: Any) -> None:
        register(PLATFORM)
