"""Point one discord.py client at ``api_base_url`` and ``gateway_url``, leaving every other client alone.

discord.py's only knobs for where Discord is are class attributes
(``Route.BASE``, ``DiscordWebSocket.DEFAULT_GATEWAY``), read when a request
or a connection is made: setting them would point every client of the
process at one Discord, so two gateways in one process (or a test's two
emulators) would talk to whichever was configured last. Instead the
client's own ``HTTPClient`` (one per ``discord.Client``) gets two
instance-level wrappers: every REST request built for Discord's default
base URL, and every websocket opened to Discord's default gateway, is
rebased onto the configured ones just before it goes out. Against the real
Discord (the defaults) nothing is wrapped.
"""

from __future__ import annotations

from typing import Any

#: What discord.py 2.7 builds URLs from when nothing is changed.
SDK_API_BASE = "https://discord.com/api/v10"
SDK_GATEWAY = "wss://gateway.discord.gg"


def rebase(url: str, default: str, configured: str) -> str:
    """``url`` with the ``default`` prefix replaced by ``configured`` (unchanged when it does not start so)."""
    if configured == default or not url.startswith(default):
        return url
    rest = url[len(default):]
    if rest and rest[0] not in "/?":  # discord.gg.example.com is another host, not a path under the default
        return url
    if rest == "/" or rest.startswith("/?"):  # the default's root is the configured URL itself
        rest = rest[1:]
    return configured.rstrip("/") + rest


def point_at(http: Any, api_base_url: str, gateway_url: str) -> None:
    """Make ``http`` (a ``discord.http.HTTPClient``) call ``api_base_url`` and connect to ``gateway_url``."""
    if api_base_url.rstrip("/") != SDK_API_BASE:
        request = http.request

        async def rebased_request(route: Any, **kwargs: Any) -> Any:
            route.url = rebase(route.url, SDK_API_BASE, api_base_url)
            return await request(route, **kwargs)

        http.request = rebased_request
    if gateway_url.rstrip("/") != SDK_GATEWAY:
        ws_connect = http.ws_connect

        async def rebased_ws_connect(url: str, **kwargs: Any) -> Any:
            return await ws_connect(rebase(str(url), SDK_GATEWAY, gateway_url), **kwargs)

        http.ws_connect = rebased_ws_connect
