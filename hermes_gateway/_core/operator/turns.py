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
from typing import Any

from ..inbound.incoming import Incoming
from ..store import ConversationKey, StoreError
from ..store.outage import report as report_store_failure
from .profile import TurnProfile, is_default, resolve

log = logging.getLogger(__name__)

_CACHE = "_hermes_profile_agents"


@dataclass(frozen=True)
class TurnPlan:
    """What :func:`prepare_turn` decided for one turn."""

    profile: TurnProfile
    agent: Any


def chat_key(incoming: Incoming) -> ConversationKey:
    return ConversationKey(incoming.platform, incoming.chat_id, incoming.thread_id)


async def chat_choices(gateway: Any, key: ConversationKey) -> dict[str, str]:
    """The chat's stored choices; with the store down, none (the chat is answered with the config's)."""
    try:
        return await gateway.store.chat_settings(key)
    except StoreError as exc:
        report_store_failure(gateway.store, log, "chat choices not read", exc)
        return {}


async def profile_for(gateway: Any, incoming: Incoming) -> TurnProfile:
    return resolve(gateway.config, await chat_choices(gateway, chat_key(incoming)))


async def prepare_turn(gateway: Any, incoming: Incoming) -> TurnPlan:
    """The profile of ``incoming``'s chat and the agent that runs it."""
    profile = await profile_for(gateway, incoming)
    return TurnPlan(profile, agent_for(gateway, profile))


def agent_for(gateway: Any, profile: TurnProfile) -> Any:
    """The gateway's shared agent for the default profile; otherwise one kept per profile."""
    if is_default(gateway.config, profile):
        return gateway.agent
    agents: dict[Any, Any] = gateway.__dict__.setdefault(_CACHE, {})
    key = (profile.model_name, profile.model)
    agent = agents.get(key)
    if agent is None:
        from ..agent import AIAgent

        agent = agents[key] = AIAgent.from_config(replace(gateway.config, model=profile.model), tools=gateway.tools)
    return agent


async def close_agents(gateway: Any) -> None:
    """Close every per-profile agent's connections (the gateway stops)."""
    agents = gateway.__dict__.pop(_CACHE, {})
    for agent in agents.values():
        try:
            await agent.aclose()
        except Exception:
            log.exception("closing a model's upstream connections failed")
