"""What a turn in one chat runs with: which model, which system prompt, and where each came from.

Precedence, highest first:

* model: the chat's own ``/model`` choice; the chat's persona's ``model``;
  an override's ``model``; an override's persona's ``model``; ``model:``;
* system prompt: the chat's persona (``/persona``); an override's
  ``system_prompt``; an override's ``persona``; the chosen model's own
  ``system_prompt``; ``model.system_prompt``;
* tools: an override's ``tools.allow`` / ``tools.deny`` (:mod:`.overrides`).

A chat's own choices come first: an admin (``/model``) or the people in it
(``/persona``) made them for that chat on purpose.

A stored choice that names something the config no longer has (a persona or
model removed since) is passed over, as if it were not there: the chat
falls back to the config, never to an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any, Mapping

from .overrides import NOTHING, Overridden
from ..settings.operator import Persona

#: The chat-setting names the store keeps.
MODEL_SETTING = "model"
PERSONA_SETTING = "persona"


@dataclass(frozen=True)
class TurnProfile:
    """The effective settings of one chat's next turn."""

    model_name: str                 # the name /model shows (a models: key, or an endpoint's name)
    model: Any                      # the ModelConfig the turn's agent is built from (system prompt included)
    persona: str | None = None
    origins: Mapping[str, str] = field(default_factory=dict)  # "model" / "system_prompt" / "persona" -> where
    tools_allow: tuple[str, ...] | None = None   # None: every tool
    tools_deny: tuple[str, ...] = ()

    @property
    def system_prompt(self) -> str | None:
        return self.model.system_prompt


def default_model_name(config: Any) -> str:
    """The name of ``model:`` as ``/model`` lists it (``demo`` for the built-in demo model)."""
    return "demo" if config.model.is_demo else config.model.endpoint.name


def available_models(config: Any) -> dict[str, Any]:
    """Every model a chat may use, by the name ``/model`` shows: ``model:`` itself, each of its fallbacks
    (as a model of its own, without further fallbacks), then the ``models:`` entries."""
    out: dict[str, Any] = {default_model_name(config): config.model}
    for endpoint in config.model.fallback:
        name = "demo" if not endpoint.base_url else endpoint.name
        out.setdefault(name, replace(config.model, endpoint=endpoint, fallback=()))
    out.update(config.operator.models)
    return out


def find_model(config: Any, name: str) -> tuple[str, Any] | None:
    """``(shown name, ModelConfig)`` for a name or alias (a ``models:`` key or the model name it requests)."""
    models = available_models(config)
    if name in models:
        return name, models[name]
    for shown, model in models.items():
        if model.endpoint.name == name:
            return shown, model
    return None


def find_persona(config: Any, name: str | None) -> Persona | None:
    return config.operator.personas.get(name) if name else None


def resolve(config: Any, chosen: Mapping[str, str], over: Overridden = NOTHING) -> TurnProfile:
    """The profile of a chat whose stored choices are ``chosen`` (``{"model": ..., "persona": ...}``) and
    on which the ``overrides:`` entries ``over`` apply."""
    source = config.source
    origins: dict[str, str] = {}
    persona = find_persona(config, chosen.get(PERSONA_SETTING))
    if persona is not None:
        origins["persona"] = "this chat's /persona"
    elif over.get("persona"):
        persona = find_persona(config, over.get("persona"))
        origins["persona"] = over.origins["persona"]
    name, model = default_model_name(config), config.model
    origins["model"] = f"{source} (model)" if "model.name" in config.origins else "default"
    candidates = [(chosen.get(MODEL_SETTING), "this chat's /model")]
    if persona is not None and persona.model and origins["persona"] == "this chat's /persona":
        candidates.append((persona.model, f"{source} (personas.{persona.name}.model)"))
    candidates.append((over.get("model"), over.origins.get("model", "")))
    if persona is not None and persona.model:
        candidates.append((persona.model, f"{source} (personas.{persona.name}.model)"))
    for wanted, where in candidates:
        found = find_model(config, wanted) if wanted else None
        if found is not None:
            (name, model), origins["model"] = found, where
            break
    prompt = model.system_prompt
    origins["system_prompt"] = (f"{source} (models.{name}.system_prompt)" if name in config.operator.models
                                else f"{source} (model.system_prompt)") if prompt else "none"
    if model.system_prompt is None and config.model.system_prompt:
        prompt, origins["system_prompt"] = config.model.system_prompt, f"{source} (model.system_prompt)"
    if persona is not None and origins["persona"] != "this chat's /persona":  # an override's persona
        prompt, origins["system_prompt"] = persona.system_prompt, f"{source} (personas.{persona.name})"
    if over.get("system_prompt"):
        prompt, origins["system_prompt"] = over.get("system_prompt"), over.origins["system_prompt"]
    if persona is not None and origins["persona"] == "this chat's /persona":
        prompt, origins["system_prompt"] = persona.system_prompt, f"{source} (personas.{persona.name})"
    if prompt != model.system_prompt:
        model = replace(model, system_prompt=prompt)
    tools = (over.get("tools_allow"), tuple(over.get("tools_deny") or ()))
    for key in ("tools_allow", "tools_deny"):
        if key in over.origins:
            origins[key] = over.origins[key]
    return TurnProfile(name, model, persona.name if persona else None, origins, tools_allow=tools[0],
                       tools_deny=tools[1])


def tool_allowed(profile: "TurnProfile", tool_name: str) -> bool:
    """``tools.allow`` / ``tools.deny`` of the overrides (names or glob patterns; deny wins)."""
    if profile.tools_allow is not None and not any(fnmatchcase(tool_name, p) for p in profile.tools_allow):
        return False
    return not any(fnmatchcase(tool_name, p) for p in profile.tools_deny)


def is_default(config: Any, profile: TurnProfile) -> bool:
    """Whether the profile is exactly ``model:`` (the gateway's shared agent serves it)."""
    return profile.model == config.model and profile.tools_allow is None and not profile.tools_deny
