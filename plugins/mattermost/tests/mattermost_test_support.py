"""Helpers shared by the mattermost plugin's tests (a module with a unique name, not a conftest).

:func:`runner` builds one client as the gateway does (``PlatformRunner``)
against the emulator; :func:`gateway` runs a whole gateway (``TestGateway``)
with the demo model. Both keep Mattermost's wire behaviour but replace its
pacing (``LIMITS``) with budgets no test has to wait for, unless a test
gives its own.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget
from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_mattermost import plugin
from hermes_mattermost.emulator import ALICE_ID, BOB_ID, BOT_ID, BOT_TOKEN  # noqa: F401

LIMITS = {"budgets": {"default": RateBudget(rate=200, burst=20)}, "bot_budget": RateBudget(rate=400, burst=40),
          "edit_interval": 0.0}


def section(mm: Any, **settings: Any) -> dict[str, Any]:
    return {"url": mm.base_url, "token": BOT_TOKEN, "reconnect_delay": 0.05, **settings}


def runner(mm: Any, *, start: bool = True, limits: Any = LIMITS, **settings: Any) -> PlatformRunner:
    return PlatformRunner(plugin, settings=section(mm, **settings), limits=limits, start=start)


def config(mm: Any, *, tokens_per_second: float = 300, **settings: Any) -> dict[str, Any]:
    return {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"mattermost": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"mattermost": {"enabled": True, **section(mm, **settings)}},
    }


def gateway(mm: Any, *, limits: Any = LIMITS, extra: tuple[Any, ...] = (), data: dict[str, Any] | None = None,
            **settings: Any) -> TestGateway:
    cfg = config(mm, **settings)
    cfg.update(data or {})
    return TestGateway(cfg, plugin, *extra, limits=limits, shutdown_grace=0.5)
