"""The ``platforms.whatsapp`` section of config.yaml, declared as :class:`WhatsAppSettings`.

The core parses the section into it (types, unknown keys, ``${ENV}``) and
masks the three secrets everywhere; what the types cannot say — a secret's
shape, the phone number id's digits, the URL's form — is checked in
``__post_init__``, each mistake one line naming the key, never a secret's value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_gateway import SettingsError, secret, setting

DEFAULT_API_BASE_URL = "https://graph.facebook.com/v21.0"
#: Shorter values are refused: the log scrubber would not mask them (they could be ordinary words).
MIN_SECRET = 8
SECRET_KEYS = ("access_token", "app_secret", "verify_token")


@dataclass(frozen=True, kw_only=True)
class WhatsAppSettings:
    """What the plugin needs to send from one business phone number and check its webhooks."""

    access_token: str = secret()              # the Cloud API access token (a system user token)
    phone_number_id: str | int                # the Phone number ID from the app's WhatsApp set-up
    app_secret: str = secret()                # the Meta app's secret, which signs every webhook
    verify_token: str = secret()              # the token typed into the webhook set-up
    api_base_url: str = DEFAULT_API_BASE_URL
    timeout: float = setting(20.0, minimum=1, maximum=300)  # seconds one Graph API call may take

    def __post_init__(self) -> None:
        for name in SECRET_KEYS:
            value = getattr(self, name).strip()
            if any(c.isspace() for c in value) or len(value) < MIN_SECRET:
                raise SettingsError(name, f"one word of at least {MIN_SECRET} characters, no spaces "
                                          f"(not shown: it is a secret)")
            object.__setattr__(self, name, value)
        phone = str(self.phone_number_id).strip()  # YAML reads an unquoted id as a number; it is an id
        if not re.fullmatch(r"\d{5,20}", phone):
            raise SettingsError("phone_number_id", 'the Phone number ID from the app\'s WhatsApp set-up (digits, '
                                                   'not the phone number itself), e.g. phone_number_id: "1234567890"')
        object.__setattr__(self, "phone_number_id", phone)
        if not re.match(r"^https?://[^/\s]+(/\S*)?$", self.api_base_url):
            raise SettingsError("api_base_url",
                                f"an http(s) URL of the Graph API with its version, e.g. {DEFAULT_API_BASE_URL}")
        if any(getattr(self, name) in self.api_base_url for name in SECRET_KEYS):
            raise SettingsError("api_base_url", "the server's URL without a token in it")
        object.__setattr__(self, "api_base_url", self.api_base_url.rstrip("/"))

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.access_token, self.app_secret, self.verify_token)
