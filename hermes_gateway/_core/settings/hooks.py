"""``hooks:`` of config.yaml: the webhooks the world outside may call (``POST /hooks/NAME``, issue 38).

Each entry names a hook, how a caller proves it is allowed (``verify`` with
its ``secret``), the chat its turn answers into (``chat: telegram:-1001234``)
and the prompt the turn runs. Parsed with the config's own parser (every
mistake one line naming the file, the key and what was expected); like
:mod:`.outbound`, this module does not import the config module at run
time (the config module imports it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: The top-level key of config.yaml this module parses.
HOOKS_KEY = "hooks"
#: How a caller proves it may call a hook.
VERIFY_KINDS = ("github", "hmac-sha256", "bearer")
_HOOK_KEYS = ("name", "secret", "verify", "chat", "thread", "prompt", "max_bytes", "per_minute", "burst")
#: A name that is one path segment of ``/hooks/NAME`` as written (no escaping needed).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: ``max_bytes`` by default (GitHub's payloads are capped at 25 MB, but a push or a CI event is a few KB).
DEFAULT_MAX_BYTES = 262_144
#: The largest ``max_bytes`` accepted: the body is held in memory, and the prompt carries it.
MAX_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class HookSettings:
    """One ``hooks[i]`` entry."""

    name: str
    verify: str
    platform: str
    chat: str
    prompt: str
    secret: str = field(default="", repr=False)
    thread: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    #: Accepted calls per minute on average (a token bucket), ``burst`` at once; more get 429.
    per_minute: float = 60.0
    burst: int = 10

    @property
    def needs_json(self) -> bool:
        """Whether the prompt reads fields of a JSON body (``{json...}``): a body that is not JSON is a 400."""
        return "{json" in self.prompt


def parse_hooks(p: Any, value: Any) -> tuple[HookSettings, ...]:
    """The ``hooks:`` list (``p`` is the config's ``_Parser``: one-line errors naming the key)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise p.fail(HOOKS_KEY, "a list of hooks ({name, secret, verify, chat, prompt}), "
                                f"got {type(value).__name__}")
    out: list[HookSettings] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        key = f"{HOOKS_KEY}[{i}]"
        if not isinstance(item, dict) or not item:
            raise p.fail(key, "a mapping with name, secret, verify, chat and prompt")
        sec = p.section(item, key, _HOOK_KEYS)
        name = sec.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise p.fail(f"{key}.name", f"a name of letters, digits, '_', '.' or '-' (it is the URL's last part, "
                                        f"/hooks/NAME), got {name!r}")
        if name in seen:
            raise p.fail(f"{key}.name", f"a name no other hook has, got {name!r} twice")
        seen.add(name)
        verify = sec.get("verify")
        if verify not in VERIFY_KINDS:
            raise p.fail(f"{key}.verify", f"one of {', '.join(VERIFY_KINDS)} (hook {name}), got {verify!r}")
        secret = sec.get("secret")
        if not isinstance(secret, str) or not secret.strip():
            shown = "nothing" if secret is None or secret == "" else f"a {type(secret).__name__}"
            raise p.fail(f"{key}.secret", f"a non-empty string (hook {name}; write ${{ENV_NAME}} to keep it out of "
                                          f"the file), got {shown}")
        chat = sec.get("chat")
        platform, _, chat_id = str(chat or "").partition(":")
        if not isinstance(chat, (str, int)) or not platform.strip() or not chat_id.strip():
            raise p.fail(f"{key}.chat", f"PLATFORM:CHAT such as telegram:-1001234 (hook {name}), got {chat!r}")
        prompt = p.check(sec.get("prompt"), f"{key}.prompt", "str") if sec.get("prompt") is not None else ""
        if not prompt.strip():
            raise p.fail(f"{key}.prompt", f"a non-empty prompt such as 'Summarise this for the team: {{body}}' "
                                          f"(hook {name})")
        thread = sec.get("thread")
        out.append(HookSettings(
            name=name, verify=verify, platform=platform.strip(), chat=chat_id.strip(), prompt=prompt,
            secret=secret.strip(), thread=None if thread is None else str(thread),
            max_bytes=p.get(sec, key, "max_bytes", "int", DEFAULT_MAX_BYTES, minimum=1, maximum=MAX_MAX_BYTES),
            per_minute=p.get(sec, key, "per_minute", "number", 60.0, minimum=0.01, maximum=1_000_000),
            burst=p.get(sec, key, "burst", "int", 10, minimum=1, maximum=1_000_000)))
    return tuple(out)
