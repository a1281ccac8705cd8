"""Before and after one chat turn: the chat's profile and agent; afterwards, its usage recorded.

One agent per distinct profile (model and system prompt), built on first
use and kept for the gateway's run, so each provider's connections are
pooled as the default agent's are. The profiles come from the config (a
finite set), so the cache is bounded by it. The default profile is served
by the gateway's own shared agent, exactly as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from ..messages.incoming import Incoming
from ..store import ConversationKey, StoreError
from ..store.outage import report as report_store_failure
from .overrides import for_incoming
from .profile import TurnProfile, is_default, resolve, tool_allowed

if TYPE_CHECKING:
    from ..config import Config
    from ..delivery import Delivery
    from ..store import ConversationStore

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class TurnPlan:
    """What :func:`prepare_turn` decided for one turn."""

    profile: TurnProfile
    agent: Any
    stream_settings: Any = None  # StreamSettings when an override changes streaming; None: the config's
    config: Any = None

    def footer(self, end: Any) -> str | None:
        """``usage.footer``'s line for the turn that ended with ``end``."""
        from .usage import footer

        return footer(self.config, self.profile.model_name, end.usage)

    async def record_usage(self, store: Any, incoming: Incoming, end: Any) -> None:
        """Keep the turn's usage, per conversation, user and model."""
        from .usage import record_turn_usage

        await record_turn_usage(store, incoming, self.profile.model_name, end.usage)


def chat_key(incoming: Incoming) -> ConversationKey:
    return ConversationKey(incoming.platform, incoming.chat_id, incoming.thread_id)


async def chat_choices(store: Any, key: ConversationKey) -> dict[str, str]:
    """The chat's stored choices; with the store down, none (the chat is answered with the config's)."""
    try:
        return await store.chat_settings(key)
    except StoreError as exc:
        report_store_failure(store, log, "chat choices not read", exc)
        return {}


async def profile_for(config: "Config", store: "ConversationStore", incoming: Incoming) -> TurnProfile:
    return resolve(config, await chat_choices(store, chat_key(incoming)), for_incoming(config, incoming))


async def prepare_turn(config: "Config", store: "ConversationStore", delivery: "Delivery", agents: "ProfileAgents",
                       incoming: Incoming) -> TurnPlan:
    """The profile of ``incoming``'s chat, the agent that runs it, and its streaming settings."""
    profile = await profile_for(config, store, incoming)
    return TurnPlan(profile, agents.agent(profile), stream_settings(config, delivery, incoming), config)


def stream_settings(config: "Config", delivery: "Delivery", incoming: Incoming) -> Any:
    """The chat's streaming settings when an override sets some (``overrides[i].streaming``); else None."""
    over = for_incoming(config, incoming)
    changes = {name.split(".", 1)[1]: value for name, value in over.values.items() if name.startswith("streaming.")}
    if not changes:
        return None
    platform = delivery.hooks(incoming.platform).platform
    base = replace(config.streaming_for(incoming.platform),
                   typing_interval=max(config.conversation.typing_interval, platform.typing_interval))
    return replace(base, **changes)


class ProfileAgents:
    """The agent of each profile: the gateway's shared one for the default, one kept per other profile (a chat
    on another model or persona) for the gateway's run.

    Built by the gateway with the config, its shared agent and the live tool
    list; owned by it (closed when it stops), not kept in its attributes.
    """

    def __init__(self, config: Any, default: Callable[[], Any], tools: Callable[[], Any]) -> None:
        self.config = config
        self._default = default
        self._tools = tools
        self._agents: dict[Any, Any] = {}

    def agent(self, profile: TurnProfile) -> Any:
        if is_default(self.config, profile):
            return self._default()
        key = (profile.model_name, profile.model, profile.tools_allow, profile.tools_deny)
        agent = self._agents.get(key)
        if agent is None:
            from ..agent import AIAgent

            every = self._tools()  # live (MCP tools come and go): a filtered view of it, when it is one
            keep = lambda tool: tool_allowed(profile, tool.name)  # noqa: E731
            tools = every.where(keep) if hasattr(every, "where") else [tool for tool in every if keep(tool)]
            agent = self._agents[key] = AIAgent.from_config(replace(self.config, model=profile.model), tools=tools)
        return agent

    async def aclose(self) -> None:
        """Close every per-profile agent's connections (the gateway stops)."""
        agents, self._agents = self._agents, {}
        for agent in agents.values():
            try:
                await agent.aclose()
            except Exception:
                log.exception("closing a model's upstream connections failed")
