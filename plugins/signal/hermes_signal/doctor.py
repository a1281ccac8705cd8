"""``hermes-gateway doctor`` for Signal: the daemon answers (``version``) and knows the account (``getUserStatus``).

The core calls :func:`doctor` (``Platform.doctor``) with the parsed settings
and prints each ``(ok, text)`` as one line, secrets masked.
"""

from __future__ import annotations

from hermes_gateway import DeliveryError

from .rpc import Rpc
from .settings import SignalSettings


async def doctor(settings: SignalSettings) -> list[tuple[bool, str]]:
    rpc = Rpc(settings)
    try:
        try:
            version = await rpc.call("version", {}, what="version", sends=False)
        except DeliveryError as exc:
            return [(False, f"url {settings.url}: {exc} (start it: signal-cli -a {settings.account} daemon --http "
                            "127.0.0.1:8080)")]
        shown = version.get("version") if isinstance(version, dict) else None
        lines = [(True, f"signal-cli daemon {shown or '(version unknown)'} answers at {settings.url}")]
        try:
            await rpc.call("getUserStatus", {"recipient": [settings.account]}, what="account", sends=False)
        except DeliveryError as exc:
            lines.append((False, f"account {settings.account}: {exc} (is the daemon started with -a "
                                 f"{settings.account}, and the number registered or linked?)"))
        else:
            lines.append((True, f"account {settings.account} is known to the daemon"))
        return lines
    finally:
        await rpc.close()
