"""Helpers shared by the whatsapp plugin's tests (a module with a unique name, not a conftest).

Clients are built the way the gateway builds them, through the kit
(:class:`hermes_gateway.testing.PlatformRunner`, :class:`~hermes_gateway.testing.TestGateway`).
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget
from hermes_gateway.testing import PlatformRunner, TestGateway, eventually  # noqa: F401  (tests import it here)
from hermes_whatsapp import ROUTE, WhatsAppClient, plugin

TOKEN = "EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ"
PHONE_ID = "106540352242922"
APP_SECRET = "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b"
VERIFY_TOKEN = "hermes-verify-7Q2x"
USER = "4915112345678"
SECRETS = (TOKEN, APP_SECRET, VERIFY_TOKEN)
FAST = {"default": RateBudget(rate=200, burst=50)}


def section(meta: Any, **extra: Any) -> dict[str, Any]:
    """``platforms.whatsapp`` pointed at the emulator."""
    return {"enabled": True, "access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": APP_SECRET,
            "verify_token": VERIFY_TOKEN, "api_base_url": meta.base_url, **extra}


def runner_for(meta: Any, *, limits: dict[str, Any] | None = None, start: bool = False,
               **settings: Any) -> PlatformRunner:
    """A runner of the plugin pointed at the emulator (``limits`` override WhatsApp's, e.g. ``budgets=FAST``)."""
    return PlatformRunner(plugin, section(meta, **settings), limits=limits, start=start)


def plugin_for(meta: Any, *, limits: dict[str, Any] | None = None, pair_wait: float | None = None,
               **settings: Any) -> WhatsAppClient:
    """A client built as the gateway builds it, not started (tests call its stream methods; close it after)."""
    client = runner_for(meta, limits=limits, **settings).build()
    if pair_wait is not None:
        client.pairs.first = pair_wait
    return client


def config(meta: Any, tokens_per_second: float = 0, api_server: bool = False, streaming: bool = True,
           conversation: dict[str, Any] | None = None, **whatsapp: Any) -> dict[str, Any]:
    return {
        "conversation": conversation or {},
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"whatsapp": {"enabled": streaming, "edit_interval": 0.05, "min_tokens": 2}},
        "platforms": {"whatsapp": section(meta, **whatsapp)},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": api_server},
    }


def gateway_for(meta: Any, *, limits: dict[str, Any] | None = None, shutdown_grace: float = 1.0,
                **cfg: Any) -> TestGateway:
    """The whole gateway with this plugin on the emulator (``gateway.client("whatsapp")`` is its client)."""
    return TestGateway(config(meta, **cfg), plugin, limits=limits, shutdown_grace=shutdown_grace,
                       api_server=bool(cfg.get("api_server")))


def webhook_url(gateway: TestGateway) -> str:
    assert gateway.url is not None, "the gateway is not listening"
    return gateway.url + ROUTE


def outcomes(calls: list[Any]) -> list[str]:
    """Each call's outcome (an error by its code alone), *typing…* and a plain read mark both as "read".

    Whether the core shows *typing…* before a reply the demo model (unpaced) writes at once depends on which task
    the loop runs first; either way the question is marked read before the reply's first message.
    """
    return ["read" if c.outcome in ("typing", "read") else c.outcome.split(":")[0] for c in calls]
