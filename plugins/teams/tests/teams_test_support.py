"""Helpers shared by the teams plugin's tests (a module with a unique name, not a conftest).

:func:`runner` builds one client as the gateway does (``PlatformRunner``)
pointed at the emulator, and tells the emulator where the bot's messaging
endpoint is; :func:`gateway` runs a whole gateway (``TestGateway``) with the
demo model. ``LIMITS`` replaces Teams' pacing with budgets no test waits
for, and the emulator's stream interval is shortened to match
(``FAST_STREAM``); tests of the real pacing use the platform's own limits.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import RateBudget
from hermes_gateway.testing import PlatformRunner, TestGateway
from hermes_gateway.testing import eventually  # noqa: F401  (the tests import it from here)
from hermes_teams import plugin
from hermes_teams.emulator import APP_PASSWORD

#: The emulator's stream interval for tests on LIMITS: shorter than its transit slack, so the one-a-second
#: rule is off there (the tests with the platform's real budgets check it).
FAST_STREAM = 0.05
#: The emulator's per-conversation windows for tests that run on LIMITS (the real ones: emulator.WINDOWS).
FAST_WINDOWS = ((1.0, 200),)
LIMITS = {"budgets": {"default": RateBudget(rate=100, burst=5), "private": RateBudget(rate=1 / FAST_STREAM,
                                                                                      burst=1)},
          "edit_interval": 0.0}
SECRETS = (APP_PASSWORD,)


def runner(api: Any, *, limits: Any = LIMITS, **teams: Any) -> PlatformRunner:
    return PlatformRunner(plugin, settings=api.settings(**teams), limits=limits)


def connect(api: Any, url: str | None, path: str = "/api/messages") -> None:
    assert url is not None
    api.bot_url = url + path


def config(api: Any, *, tokens_per_second: float = 400, **teams: Any) -> dict[str, Any]:
    return {
        "model": {"demo": {"tokens_per_second": tokens_per_second}},
        "streaming": {"teams": {"enabled": True, "edit_interval": 0.05, "min_tokens": 3}},
        "platforms": {"teams": {"enabled": True, **api.settings(**teams)}},
    }


def gateway(api: Any, *, limits: Any = LIMITS, cfg: dict[str, Any] | None = None, **teams: Any) -> TestGateway:
    data = config(api, **teams)
    data.update(cfg or {})
    return TestGateway(data, plugin, limits=limits, shutdown_grace=0.5)
