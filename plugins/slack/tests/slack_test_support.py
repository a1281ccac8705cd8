"""Helpers shared by the slack plugin's tests (a module with a unique name, not a conftest).

The plugin is run the way the gateway runs it: ``platforms.slack`` parsed by
the core, a client built per gateway. :func:`runner` builds one client
(``hermes_gateway.testing.PlatformRunner``) pointed at the emulator;
:func:`gateway` runs a whole gateway (``TestGateway``) with the demo model.
Both keep Slack's wire behaviour but replace its pacing (``LIMITS``) with
budgets no test has to wait for.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget, StreamSettings
from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_slack import plugin
from hermes_slack.emulator import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET

FAST = {"default": RateBudget(rate=200, burst=20)}
FAST_BOT = RateBudget(rate=400, burst=40)
#: Slack's platform with pacing no test waits for.
LIMITS = {"budgets": FAST, "bot_budget": FAST_BOT, "edit_interval": 0.0}
SETTINGS = StreamSettings(enabled=True, edit_interval=0.02, min_tokens=2)
CURSOR = " ▌"
SECRETS = (BOT_TOKEN, APP_TOKEN, SIGNING_SECRET)


def section(api: Any, **slack: Any) -> dict[str, Any]:
    """``platforms.slack`` pointed at the emulator ``api``: both tokens and the signing secret, socket mode."""
    return {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "signing_secret": SIGNING_SECRET,
            "api_base_url": api.base_url, **slack}


def runner(api: Any, *, start: bool = False, **slack: Any) -> PlatformRunner:
    """One Slack client built as the gateway builds it; receiving (auth.test, Socket Mode) only when ``start``."""
    return PlatformRunner(plugin, settings=section(api, **slack), limits=LIMITS, start=start)


def config(api: Any, *, tokens_per_second: float = 300, mode: str = "socket", **slack: Any) -> dict[str, Any]:
    """A gateway's config: the demo model, streaming on for Slack, Slack enabled against the emulator."""
    return {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"slack": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"slack": {"enabled": True, **section(api, mode=mode, **slack)}},
    }


def gateway(api: Any, *, store: dict[str, Any] | None = None, **cfg: Any) -> TestGateway:
    """A whole gateway (the built-in tools included) answering Slack through the emulator ``api``."""
    data = config(api, **cfg)
    if store is not None:
        data["store"] = store
    return TestGateway(data, plugin, limits=LIMITS, shutdown_grace=0.5)
