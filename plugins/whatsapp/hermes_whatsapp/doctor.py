"""``hermes-gateway doctor`` for WhatsApp: the access token and the phone number id work (``GET /{phone_number_id}``,
the lookup the plugin makes at start).

The core calls :func:`doctor` (``Platform.doctor``) with the parsed settings
and prints each ``(ok, text)`` as one line, secrets masked. (The webhook's
URL is set in Meta's app dashboard, not in the config: nothing to compare.)
"""

from __future__ import annotations

from hermes_gateway import DeliveryError

from .errors import TOKEN_INVALID, UNKNOWN_OBJECT, PairBackoff
from .graph import GraphClient
from .settings import WhatsAppSettings


async def doctor(settings: WhatsAppSettings) -> list[tuple[bool, str]]:
    graph = GraphClient(settings, PairBackoff())
    try:
        number = await graph.phone_number()
    except DeliveryError as exc:
        code = getattr(exc, "code", None)
        if code == TOKEN_INVALID or "access token was rejected" in str(exc):
            return [(False, "access_token: Meta refused it (190 / 401): create a new system user token with "
                            "whatsapp_business_messaging and set platforms.whatsapp.access_token")]
        if code == UNKNOWN_OBJECT:
            return [(False, f"phone_number_id {settings.phone_number_id}: the Graph API does not know it for this "
                            "token: copy the Phone number ID from the app's WhatsApp > API Setup")]
        return [(False, f"cannot look up the phone number: {exc}")]
    finally:
        await graph.close()
    shown = number.get("display_phone_number") or settings.phone_number_id
    name = f" ({number['verified_name']})" if number.get("verified_name") else ""
    return [(True, f"access_token and phone_number_id work (phone number {shown}{name})")]
