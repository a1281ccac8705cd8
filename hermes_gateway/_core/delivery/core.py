"""``Delivery``: the front door of the delivery core.

It owns what outlives one reply: the chat budgets (shared by every reply
into a chat; with several replicas, by the replicas too, through the
gateway's coordination) and the hook bindings of each platform. A gateway
has one.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, AsyncIterable, Awaitable, Callable, TypeVar

from ..config import Config
from ..events import StreamEvent, StreamReset, TextDelta, ToolCallFinished, ToolCallStarted, TurnEnd
from ..media import Media
from ..media_dir import MediaDirectory
from ..platform import Stream, StreamSettings
from ..plugins import Plugins
from .budget import ALL_CHATS, UNLIMITED, ChatBudgets
from .calls import CallOutcome, call_into_chat
from .hooks import PlatformHooks
from .observer import DeliveryObserver
from .pacing import Pacer
from .session import DeliveryPolicy, DeliveryReport, StreamSession
from .tool_progress import tell_tool_progress

if TYPE_CHECKING:
    from ..coordination import Coordination

T = TypeVar("T")


class Delivery:
    """Creates :class:`StreamSession` objects with the right limits, budget and settings."""

    def __init__(self, plugins: Plugins, config: Config | None = None, *, budgets: ChatBudgets | None = None,
                 policy: DeliveryPolicy | None = None, coordination: "Coordination | None" = None,
                 observer: DeliveryObserver | None = None, clients: Callable[[str], Any] | None = None) -> None:
        """``clients(platform)``: that platform's running client (the gateway's), or None."""
        self.plugins = plugins
        self.clients = clients or (lambda platform: None)
        self.observer = observer  # the gateway's metrics (one ReplyObserver per reply), or None
        self.config = config or Config()
        self.coordination = coordination  # replicas' shared budgets (None or local: this process's only)
        self.budgets = budgets or ChatBudgets()  # this process's own buckets (with replicas, consulted first)
        self.policy = policy or DeliveryPolicy()
        self._hooks: dict[str, PlatformHooks] = {}
        self._live: weakref.WeakSet[StreamSession] = weakref.WeakSet()  # the replies being delivered (cut_all)
        self.media_directory = MediaDirectory(self.config.media.path(), keep=self.config.media.keep_seconds)

    def hooks(self, platform: str) -> PlatformHooks:
        """The stream hooks of ``platform``'s plugin (KeyError names the known platforms)."""
        if platform not in self._hooks:
            self._hooks[platform] = PlatformHooks(self.plugins.pm, self.plugins.platform(platform),
                                                  client=lambda: self.clients(platform))
        return self._hooks[platform]

    def session(self, platform: str, chat_id: str, *, thread_id: str | None = None, chat_kind: str | None = None,
                settings: StreamSettings | None = None, reply_to: str | None = None,
                journal: Any = None) -> StreamSession:
        """A session for one reply into one chat; settings default to the config's for that platform.

        The chat's budget and the bot's (``ALL_CHATS``) are shared with every
        other reply of this gateway. The bot's exists even when the platform
        declares no ``bot_budget``, so a bot-scope 429 always has a budget to
        block: every chat of that bot then waits.
        """
        hooks = self.hooks(platform)
        if settings is None:
            settings = replace(self.config.streaming_for(platform),
                               typing_interval=max(self.config.conversation.typing_interval,
                                                   hooks.platform.typing_interval))
        stream = Stream(platform=hooks.platform, chat_id=str(chat_id), thread_id=thread_id, chat_kind=chat_kind,
                        settings=settings, reply_to=reply_to)
        now = asyncio.get_running_loop().time()
        budget = self.budgets.for_chat(platform, stream.chat_id, hooks.platform.budget_for(chat_kind), now)
        bot = self.budgets.for_chat(platform, ALL_CHATS, hooks.platform.bot_budget or UNLIMITED, now)
        shared = None
        if self.coordination is not None and self.coordination.shared:
            shared = self.coordination.shared_budget(platform, stream.chat_id, budget.budget, bot.budget)
        session = StreamSession(hooks, stream, budget, bot_budget=bot, policy=self.policy,
                                reasoning_starts_open=self.config.model.reasoning_starts_open, shared=shared,
                                observer=self.observer.reply(platform) if self.observer is not None else None,
                                media_directory=self.media_directory, journal=journal)
        self._live.add(session)
        return session

    def pacer(self, platform: str, chat_id: str, chat_kind: str | None = None) -> Pacer:
        """A pacer on the chat's and the bot's budgets: the ones every reply into the chat spends.

        For a call into the chat outside a reply's text (a reaction, a question with buttons and its
        update): :meth:`call` makes such a call through it.
        """
        declared = self.hooks(platform).platform
        now = asyncio.get_running_loop().time()
        budget = self.budgets.for_chat(platform, str(chat_id), declared.budget_for(chat_kind), now)
        bot = self.budgets.for_chat(platform, ALL_CHATS, declared.bot_budget or UNLIMITED, now)
        shared = None
        if self.coordination is not None and self.coordination.shared:
            shared = self.coordination.shared_budget(platform, str(chat_id), budget.budget, bot.budget)
        return Pacer(budget, bot, backoff_base=self.policy.backoff_base, backoff_cap=self.policy.backoff_cap,
                     shared=shared)

    async def call(self, platform: str, chat_id: str, invoke: Callable[[], Awaitable[T]], *, what: str,
                   chat_kind: str | None = None, within: float | None = None) -> CallOutcome[T]:
        """Make one call into a chat outside a reply's text, through the chat's budget and 429 handling.

        The one path (:func:`.calls.call_into_chat`): nothing reaches the chat
        before a 429's ``retry_after`` has passed, and the call is made again
        after it; it goes ahead of a streaming reply's previews (it claims the
        chat's next token). ``within``: seconds to give up after (429 waits
        added), by default the policy's ``final_deadline``.
        """
        pacer = self.pacer(platform, chat_id, chat_kind)
        limit = self.policy.final_deadline if within is None else within
        return await call_into_chat(pacer, invoke, what=what, label=f"{platform}/{chat_id}",
                                    deadline=pacer.now() + limit,
                                    max_retries=self.policy.max_retries,
                                    max_rate_limits=self.policy.max_rate_limits, claim=True)

    def in_flight(self) -> list[StreamSession]:
        """The replies being delivered right now (started, not done), oldest first: the dashboard lists them."""
        live = [s for s in self._live if s.started_at is not None and not s.done]
        return sorted(live, key=lambda s: s.started_at or 0.0)

    def showing_text(self, platform: str, chat_id: str) -> bool:
        """A reply being delivered into this chat has shown text already (status reactions wait for that)."""
        return any(s.stream.chat_id == chat_id and s.hooks.platform.name == platform and s.shows_text
                   for s in self._live if not s.done)

    def cut_all(self, within: float | None = None) -> int:
        """Cut every reply still being delivered (the gateway stops): each is over within ``within`` seconds.

        See :meth:`StreamSession.cut`: nothing new is sent, the messages on
        screen lose their cursor while time is left. Returns how many were cut.
        """
        live = [session for session in self._live if not session.done]
        for session in live:
            session.cut(within)
        return len(live)


async def deliver_events(events: AsyncIterable[StreamEvent], session: StreamSession) -> DeliveryReport:
    """Feed an agent's event stream into ``session`` and deliver the final reply.

    If the consuming task is cancelled (the person interrupted the reply),
    what was shown is finalised without cursor before the cancellation
    propagates.
    """
    final: str | None = None
    media: tuple[Media, ...] = ()
    session.start()
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                session.feed(event.text)
            elif isinstance(event, ToolCallStarted):
                session.tool_started(event.name)
                await tell_tool_progress(session, event)
            elif isinstance(event, ToolCallFinished):
                session.tool_finished(event.name)
                await tell_tool_progress(session, event)
            elif isinstance(event, StreamReset):
                session.reset()
            elif isinstance(event, TurnEnd):
                if event.interrupted:
                    return await session.interrupt()
                final, media = event.reply, event.media
    except asyncio.CancelledError:
        await asyncio.shield(session.interrupt())
        raise
    return await session.finish(final, media)
