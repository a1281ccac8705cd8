"""``model:`` as parsed: the upstream endpoints, their timeouts and the model's limits.

Kept beneath ``config`` (which parses it) with the other sections, so the operator's ``models:`` (named
endpoints a persona or ``/model`` picks) can hold the same values without importing the config module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..masking import mask_url, url_secrets


@dataclass(frozen=True)
class Endpoint:
    """One upstream: where, with what key, which model, which API flavour."""

    base_url: str | None = None
    api_key: str | None = None
    name: str = "demo"
    api_mode: str = "chat_completions"
    vision: bool | None = None  # this endpoint's model takes images; None: as model.vision (a fallback may differ)

    @property
    def display_url(self) -> str | None:
        """``base_url`` with any credentials in it masked: the only form that is ever printed or logged."""
        return mask_url(self.base_url) if self.base_url else None

    def secrets(self) -> tuple[str, ...]:
        """Every credential of this endpoint (the key and those inside the URL), to redact from error text."""
        return tuple(s for s in (self.api_key, *url_secrets(self.base_url)) if s)

    def __repr__(self) -> str:  # never show the key, nor credentials in the URL
        key = "set" if self.api_key else "unset"
        return (f"Endpoint(base_url={self.display_url!r}, name={self.name!r}, api_mode={self.api_mode!r}, "
                f"api_key={key})")


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    first_token: float = 60.0
    stall: float = 60.0


@dataclass(frozen=True)
class ModelConfig:
    """``model``: the primary endpoint, fallbacks, timeouts and the demo model's speed.

    With no ``base_url`` the built-in demo model answers, so a fresh machine
    works with no key.
    """

    endpoint: Endpoint = field(default_factory=Endpoint)
    fallback: tuple[Endpoint, ...] = ()
    max_turns: int = 8
    timeouts: Timeouts = field(default_factory=Timeouts)
    demo_tokens_per_second: float = 30.0
    system_prompt: str | None = None
    reasoning_starts_open: bool = False  # the chat template opens <think> in the prompt: text starts as reasoning
    #: How requests reach the upstream: ``fast`` (aiohttp, our SSE reader) or ``sdk`` (the openai SDK's public API).
    transport: str = "fast"
    vision: bool = True  # the model takes images (API image parts); false: such a request is a 400
    audio: bool = False  # the model takes input_audio parts; false (and the demo): the API server transcribes them
    #: A turn's reply (all its model calls' text) is cut at this many characters: a model that never stops.
    max_reply_chars: int = 200_000

    @property
    def is_demo(self) -> bool:
        return not self.endpoint.base_url
