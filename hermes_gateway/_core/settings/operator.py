"""``models:``, ``personas:``, ``access:`` and ``commands:`` of ``config.yaml``.

Parsed by :func:`parse_operator_sections` with the config's own parser, so
every mistake is one line naming the file, the key and what was expected,
like the rest of the config. Cross-references are checked here too: a
persona naming a model that is not configured is an error at load time,
not a surprise in a chat.

This module does not import :mod:`..config` at run time (the config module
imports it), only the parser object it is handed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from .groups import parse_group_keys

if TYPE_CHECKING:
    from .model import ModelConfig

#: The top-level keys of config.yaml this package parses.
OPERATOR_KEYS = ("models", "personas", "access", "commands", "overrides", "usage", "pricing")
#: ``usage.footer``: nothing, the turn's tokens, or its tokens and cost.
FOOTERS = ("off", "tokens", "cost")
#: Who may run a command.
ROLES = ("everyone", "admin")
#: What happens to a message from someone not in ``allowed_users``.
UNKNOWN_USERS = ("ignore", "pair", "allow")
#: A name under ``models:`` / ``personas:``: what people type after ``/model`` or ``/persona``.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
#: The word that means "back to what the config says" for ``/model`` and ``/persona``.
DEFAULT_WORD = "default"
#: Commands whose default role is ``admin`` (every other command: ``everyone``).
ADMIN_COMMANDS = frozenset({"model", "approve", "revoke"})


@dataclass(frozen=True)
class Persona:
    """``personas.NAME``: a system prompt, optionally a model, and a line for ``/persona``'s list."""

    name: str
    system_prompt: str
    model: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class AccessConfig:
    """``access:``: who the admins are (``platform:user_id`` or ``user_id`` for every platform)."""

    admins: tuple[str, ...] = ()
    unknown_users: str | None = None      # None: "ignore" when allowed_users is set, else "allow"
    pairing_ttl: float = 3600.0
    max_messages_per_minute: int = 0      # 0: off

    def is_admin(self, platform: str, user_id: str | None) -> bool:
        """Whether ``user_id`` on ``platform`` is listed in ``access.admins``."""
        if not user_id:
            return False
        return user_id in self.admins or f"{platform}:{user_id}" in self.admins


#: What an override may match on, with the weight each adds to its specificity (the sum ranks entries).
MATCH_WEIGHTS = {"platform": 1, "chat_kind": 2, "chat": 4, "thread": 8, "user": 16}
#: Streaming keys an override may set (the per-platform mapping of ``streaming:``).
OVERRIDE_STREAMING = ("enabled", "edit_interval", "min_tokens")


@dataclass(frozen=True)
class Override:
    """One ``overrides[i]`` entry: what it matches, and the settings it gives a matching chat."""

    index: int
    match: Mapping[str, str]
    model: str | None = None
    system_prompt: str | None = None
    persona: str | None = None
    tools_allow: tuple[str, ...] | None = None
    tools_deny: tuple[str, ...] = ()
    streaming: Mapping[str, Any] = field(default_factory=dict)
    busy: str | None = None
    groups: Mapping[str, Any] = field(default_factory=dict)  # groups: keys it sets (issue 38)

    @property
    def specificity(self) -> int:
        return sum(MATCH_WEIGHTS[k] for k in self.match)

    def matches(self, platform: str, chat: str | None, thread: str | None, user: str | None,
                chat_kind: str | None) -> bool:
        """Whether every key of ``match`` holds for this chat (``chat_kind``: private or group)."""
        given = {"platform": platform, "chat": chat, "thread": thread, "user": user, "chat_kind": chat_kind}
        return all(given[k] is not None and given[k] == v for k, v in self.match.items())


@dataclass(frozen=True)
class Price:
    """``pricing.MODEL``: what a million tokens cost, in and out (in whatever currency ``currency`` says)."""

    input: float
    output: float


@dataclass(frozen=True)
class UsageConfig:
    """``usage:`` and ``pricing:``."""

    footer: str = "off"
    currency: str = "$"
    pricing: Mapping[str, Price] = field(default_factory=dict)  # by model name (models: key or name requested)


@dataclass(frozen=True)
class OperatorSettings:
    """The parsed sections, as :class:`~hermes_gateway._core.config.Config` carries them."""

    models: Mapping[str, "ModelConfig"] = field(default_factory=dict)
    personas: Mapping[str, Persona] = field(default_factory=dict)
    access: AccessConfig = field(default_factory=AccessConfig)
    command_roles: Mapping[str, str] = field(default_factory=dict)  # commands.NAME.who
    overrides: tuple[Override, ...] = ()
    usage: UsageConfig = field(default_factory=UsageConfig)


def parse_operator_sections(p: Any, data: Mapping[str, Any]) -> OperatorSettings:
    """The four sections of ``data`` (the whole config mapping), validated with the config parser ``p``."""
    models = _models(p, data.get("models"))
    personas = _personas(p, data.get("personas"), models, data.get("model"))
    overrides = _overrides(p, data.get("overrides"), models, personas, data.get("model"))
    return OperatorSettings(models=models, personas=personas, access=_access(p, data.get("access")),
                            command_roles=_commands(p, data.get("commands")), overrides=overrides,
                            usage=_usage(p, data.get("usage"), data.get("pricing")))


def _check_name(p: Any, name: Any, key: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == DEFAULT_WORD:
        raise p.fail(key, f"a name of letters, digits, '_', '.', ':' or '-' (not {DEFAULT_WORD!r}), got {name!r}")
    return name


def _models(p: Any, value: Any) -> dict[str, "ModelConfig"]:
    sec = p.section(value, "models", None)
    out: dict[str, ModelConfig] = {}
    for name, item in sec.items():
        key = f"models.{name}"
        _check_name(p, name, key)
        if not isinstance(item, dict):
            raise p.fail(key, "a mapping with the keys of model: (base_url, api_key, name, api_mode, fallback, ...)")
        out[name] = p.model(item, key)
    return out


def model_names(models: Mapping[str, "ModelConfig"], default_name: str | None) -> set[str]:
    """Every name a persona, an override or ``/model`` may use: ``models:`` keys, their endpoint names,
    and the default model's name."""
    names = set(models) | {m.endpoint.name for m in models.values()}
    if default_name:
        names.add(default_name)
    return names


def _known_models(models: Mapping[str, "ModelConfig"], raw_model: Any) -> set[str]:
    """Every name a persona or override may give as ``model`` (the raw ``model:`` section for its names)."""
    default_name = raw_model.get("name") if isinstance(raw_model, dict) else None
    fallbacks = raw_model.get("fallback") if isinstance(raw_model, dict) else None
    known = model_names(models, default_name if isinstance(default_name, str) else "demo")
    for item in fallbacks if isinstance(fallbacks, list) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            known.add(item["name"])
    return known


def _personas(p: Any, value: Any, models: Mapping[str, "ModelConfig"], raw_model: Any) -> dict[str, Persona]:
    sec = p.section(value, "personas", None)
    known = _known_models(models, raw_model)
    out: dict[str, Persona] = {}
    for name, item in sec.items():
        key = f"personas.{name}"
        _check_name(p, name, key)
        if isinstance(item, str):
            item = {"system_prompt": item}
        body = p.section(item, key, ("system_prompt", "model", "description"))
        prompt = p.get(body, key, "system_prompt", "str", None)
        if not prompt:
            raise p.fail(f"{key}.system_prompt", "the persona's system prompt (a non-empty string)")
        model = p.get(body, key, "model", "str", None)
        if model is not None and model not in known:
            raise p.fail(f"{key}.model", f"a configured model ({', '.join(sorted(known))}), got {model!r}")
        out[name] = Persona(name, prompt, model, p.get(body, key, "description", "str", None))
    return out


def _access(p: Any, value: Any) -> AccessConfig:
    sec = p.section(value, "access", ("admins", "unknown_users", "pairing_ttl", "max_messages_per_minute"))
    d = AccessConfig()
    admins = sec.get("admins")
    if isinstance(admins, (str, int)) and not isinstance(admins, bool):
        admins = [admins]
    if admins is not None and not isinstance(admins, list):
        raise p.fail("access.admins", "a list of platform:user_id (or user_id for every platform)")
    ids: list[str] = []
    for i, item in enumerate(admins or []):
        if isinstance(item, bool) or not isinstance(item, (str, int)) or not str(item).strip():
            raise p.fail(f"access.admins[{i}]", f"platform:user_id or user_id, got {item!r}")
        ids.append(str(item).strip())
    return AccessConfig(
        admins=tuple(ids),
        unknown_users=p.get(sec, "access", "unknown_users", "str", None, choices=UNKNOWN_USERS),
        pairing_ttl=p.get(sec, "access", "pairing_ttl", "number", d.pairing_ttl, minimum=1, maximum=30 * 86_400),
        max_messages_per_minute=p.get(sec, "access", "max_messages_per_minute", "int", 0, minimum=0,
                                      maximum=1_000_000),
    )


def _commands(p: Any, value: Any) -> dict[str, str]:
    sec = p.section(value, "commands", None)
    out: dict[str, str] = {}
    for name, item in sec.items():
        key = f"commands.{name}"
        if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9_]{1,32}", name):
            raise p.fail(key, f"a command name (lower-case, no slash), got {name!r}")
        body = p.section(item, key, ("who",))
        who = p.get(body, key, "who", "str", None, choices=ROLES)
        if who is not None:
            out[name] = who
    return out


def _overrides(p: Any, value: Any, models: Mapping[str, "ModelConfig"], personas: Mapping[str, Persona],
               raw_model: Any) -> tuple[Override, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise p.fail("overrides", "a list of {match: {...}, model/system_prompt/persona/tools/streaming/conversation/groups}")
    known = _known_models(models, raw_model)
    out: list[Override] = []
    for i, item in enumerate(value):
        key = f"overrides[{i}]"
        body = p.section(item, key, ("match", "model", "system_prompt", "persona", "tools", "streaming",
                                     "conversation", "groups"))
        match_raw = p.section(body.get("match"), f"{key}.match", tuple(MATCH_WEIGHTS))
        if not match_raw:
            raise p.fail(f"{key}.match", f"a mapping with at least one of {', '.join(MATCH_WEIGHTS)}")
        match: dict[str, str] = {}
        for name, raw in match_raw.items():
            if isinstance(raw, bool) or not isinstance(raw, (str, int)) or str(raw).strip() == "":
                raise p.fail(f"{key}.match.{name}", f"an id or name (a string or a number), got {raw!r}")
            match[name] = str(raw).strip()
        if "chat_kind" in match and match["chat_kind"] not in ("private", "group"):
            raise p.fail(f"{key}.match.chat_kind", f"private or group, got {match['chat_kind']!r}")
        model = p.get(body, key, "model", "str", None)
        if model is not None and model not in known:
            raise p.fail(f"{key}.model", f"a configured model ({', '.join(sorted(known))}), got {model!r}")
        persona = p.get(body, key, "persona", "str", None)
        if persona is not None and persona not in personas:
            raise p.fail(f"{key}.persona", f"a persona under personas: ({', '.join(sorted(personas)) or 'none'}), "
                                           f"got {persona!r}")
        tools = p.section(body.get("tools"), f"{key}.tools", ("allow", "deny"))
        allow = p.get(tools, f"{key}.tools", "allow", "strlist", None)
        deny = p.get(tools, f"{key}.tools", "deny", "strlist", ())
        streaming_raw = p.section(body.get("streaming"), f"{key}.streaming", OVERRIDE_STREAMING)
        streaming: dict[str, Any] = {}
        if "enabled" in streaming_raw:
            streaming["enabled"] = p.check(streaming_raw["enabled"], f"{key}.streaming.enabled", "bool")
        if "edit_interval" in streaming_raw:
            streaming["edit_interval"] = p.check(streaming_raw["edit_interval"], f"{key}.streaming.edit_interval",
                                                 "number", minimum=0, maximum=3600)
        if "min_tokens" in streaming_raw:
            streaming["min_tokens"] = p.check(streaming_raw["min_tokens"], f"{key}.streaming.min_tokens", "int",
                                              minimum=0, maximum=1_000_000)
        conversation = p.section(body.get("conversation"), f"{key}.conversation", ("busy",))
        out.append(Override(
            index=i, match=match, model=model, system_prompt=p.get(body, key, "system_prompt", "str", None),
            persona=persona, tools_allow=allow, tools_deny=deny, streaming=streaming,
            busy=p.get(conversation, f"{key}.conversation", "busy", "str", None, choices=("queue", "interrupt")),
            groups=parse_group_keys(p, body.get("groups"), f"{key}.groups"),
        ))
    return tuple(out)


def _usage(p: Any, value: Any, pricing_value: Any) -> UsageConfig:
    sec = p.section(value, "usage", ("footer", "currency"))
    footer = sec.get("footer")
    if footer is False:  # YAML reads a bare `off` as false
        footer = "off"
    sec = {**sec, "footer": footer} if "footer" in sec else sec
    prices: dict[str, Price] = {}
    for name, item in p.section(pricing_value, "pricing", None).items():
        key = f"pricing.{name}"
        body = p.section(item, key, ("input", "output"))
        if "input" not in body or "output" not in body:
            raise p.fail(key, "input and output: the price of a million tokens each way (for example 0.15 and 0.60)")
        prices[str(name)] = Price(p.check(body["input"], f"{key}.input", "number", minimum=0, maximum=1_000_000),
                                  p.check(body["output"], f"{key}.output", "number", minimum=0, maximum=1_000_000))
    d = UsageConfig()
    footer = p.get(sec, "usage", "footer", "str", d.footer, choices=FOOTERS)
    if footer == "cost" and not prices:
        raise p.fail("usage.footer", "tokens or off, unless pricing: gives prices (cost needs them)")
    return UsageConfig(footer=footer, currency=p.get(sec, "usage", "currency", "str", d.currency), pricing=prices)
