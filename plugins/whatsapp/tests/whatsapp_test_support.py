"""Helpers shared by the whatsapp plugin's tests (a module with a unique name, not a conftest)."""

from __future__ import annotations

from typing import Any

from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway import RateBudget, make_plugins
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.delivery import Delivery
from hermes_gateway._core.gateway import Gateway
from hermes_whatsapp import ROUTE, WhatsAppPlugin

TOKEN = "EAAGm0PX4ZCpsBAKZCZBq3w0ZCkWx8ZAXfrE7tG1nMeV0tQ"
PHONE_ID = "106540352242922"
APP_SECRET = "3f1c9a0be5d7f24e6a8b0c1d2e3f4a5b"
VERIFY_TOKEN = "hermes-verify-7Q2x"
USER = "4915112345678"
SECRETS = (TOKEN, APP_SECRET, VERIFY_TOKEN)
FAST = {"default": RateBudget(rate=200, burst=50)}


def plugin_for(meta: Any, **kw: Any) -> WhatsAppPlugin:
    """A plugin pointed at the emulator, with WhatsApp's limits unless ``kw`` overrides them."""
    return WhatsAppPlugin(access_token=TOKEN, phone_number_id=PHONE_ID, app_secret=APP_SECRET,
                          verify_token=VERIFY_TOKEN, api_base_url=meta.base_url, **kw)


def section(meta: Any, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": APP_SECRET,
            "verify_token": VERIFY_TOKEN, "api_base_url": meta.base_url, **extra}


def config(meta: Any, tokens_per_second: float = 0, api_server: bool = False, streaming: bool = True,
           conversation: dict[str, Any] | None = None, **whatsapp: Any) -> Any:
    return parse_config({
        "conversation": conversation or {},
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"whatsapp": {"enabled": streaming, "edit_interval": 0.05, "min_tokens": 2}},
        "platforms": {"whatsapp": section(meta, **whatsapp)},
        "api_server": {"host": "127.0.0.1", "port": 0, "enabled": api_server},
    }, env={})


def gateway_for(meta: Any, plugin: WhatsAppPlugin | None = None, **cfg: Any) -> tuple[Gateway, WhatsAppPlugin]:
    plugin = plugin or plugin_for(meta)
    plugins = make_plugins(builtins=("hermes_gateway._core.builtin.tools", "hermes_gateway._core.api_server.plugin"),
                           load_entry_points=False, extra=[plugin])
    assert not plugins.problems, plugins.problems
    return Gateway(config(meta, **cfg), plugins, shutdown_grace=1.0), plugin


def webhook_url(gateway: Gateway) -> str:
    assert gateway.url is not None, "the gateway is not listening"
    return gateway.url + ROUTE


def delivery_for(plugin: WhatsAppPlugin) -> Delivery:
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[plugin])
    assert not plugins.problems, plugins.problems
    return Delivery(plugins)

