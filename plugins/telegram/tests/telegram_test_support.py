"""Helpers shared by the telegram plugin's tests (a module with a unique name, not a conftest).

Clients are built the way the gateway builds them, through the kit:
:class:`hermes_gateway.testing.PlatformRunner` for one client (its
``platforms.telegram`` section parsed by the core, a context, the factory
called) and :class:`hermes_gateway.testing.TestGateway` for the whole gateway.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import PlatformRunner, TestGateway, eventually  # noqa: F401  (tests import it here)
from hermes_telegram import plugin

TOKEN = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
SECRET_HALF = TOKEN.split(":", 1)[1]
FAST = {"default": RateBudget(rate=200, burst=20)}
#: Telegram's wire behaviour without pacing worth waiting for (``Platform`` fields replaced for the test).
FAST_LIMITS = {"budgets": FAST, "edit_interval": 0.0}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"


def section(base_url: str, **settings: Any) -> dict[str, Any]:
    """``platforms.telegram`` pointed at an emulator."""
    return {"token": TOKEN, "base_url": base_url, **settings}


def fast_runner(base_url: str, *, limits: dict[str, Any] | None = None, **settings: Any) -> PlatformRunner:
    """The plugin's client, built as the gateway builds it and not started (no polling).

    ``runner.client`` is the :class:`~hermes_telegram.TelegramClient` (close it after:
    ``await runner.client.close()``), ``runner.delivery()`` the real core sending through it.
    """
    runner = PlatformRunner(plugin, section(base_url, **settings), limits={**FAST_LIMITS, **(limits or {})},
                            start=False)
    runner.build()
    return runner


def config(base_url: str, *, tokens_per_second: float = 300, streaming: dict[str, Any] | None = None,
           **telegram: Any) -> dict[str, Any]:
    """A config.yaml mapping: the demo model, previews on Telegram, the platform on the emulator."""
    return {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"telegram": streaming if streaming is not None
                      else {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"telegram": {"enabled": True, **section(base_url, poll_timeout=5), **telegram}},
    }


def gateway_for(base_url: str, *, limits: dict[str, Any] | None = None, shutdown_grace: float = 0.5,
                **cfg: Any) -> TestGateway:
    """The whole gateway with this plugin on the emulator (``gateway.client("telegram")`` is its client)."""
    return TestGateway(config(base_url, **cfg), plugin, limits={**FAST_LIMITS, **(limits or {})},
                       shutdown_grace=shutdown_grace)


def spy_on_receive(gateway: TestGateway) -> tuple[list[Any], list[Any]]:
    """What the running client hands the core (polling and webhook alike), and the reply futures it got back.

    Wraps the client's :class:`~hermes_gateway.PlatformContext` ``receive``, which the client looks up per message.
    """
    context = gateway.client("telegram").context
    original = context.receive
    seen: list[Any] = []
    replies: list[Any] = []

    def spy(incoming: Any) -> Any:
        seen.append(incoming)
        replies.append(original(incoming))
        return replies[-1]
    context.receive = spy
    return seen, replies


def delivery_for(runner: PlatformRunner, config: dict[str, Any] | None = None) -> Any:
    """The real delivery core sending through the runner's client (fresh budgets each call)."""
    return runner.delivery(config)


def webhook_gateway(base_url: str) -> TestGateway:
    """The whole gateway with this plugin receiving by webhook from the emulator, on a free loopback port."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    section_ = {**section(base_url), "enabled": True, "mode": "webhook", "webhook_secret": "s3cret-0123456789",
                "webhook_url": f"http://127.0.0.1:{port}/webhooks/telegram"}
    return TestGateway({"model": {"demo": {"tokens_per_second": 300}}, "platforms": {"telegram": section_},
                        "api_server": {"enabled": False, "host": "127.0.0.1", "port": port}},
                       plugin, limits=FAST_LIMITS, shutdown_grace=0.5)
