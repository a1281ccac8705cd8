"""``platforms.teams`` parsed by the core: one line naming the key for each mistake, the secret never shown."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner
from hermes_teams import plugin
from hermes_teams.settings import DEFAULT_OPENID_METADATA_URL, DEFAULT_TOKEN_URL

SECRET = "s3cret-value-never-shown-0123"
GOOD = {"app_id": "00000000-0000-4000-8000-000000000001", "app_password": SECRET}


async def test_the_defaults_are_microsofts_public_cloud():
    async with PlatformRunner(plugin, GOOD, start=False) as running:
        settings = running.client.settings
        assert (settings.token_url, settings.openid_metadata_url, settings.path) == (
            DEFAULT_TOKEN_URL, DEFAULT_OPENID_METADATA_URL, "/api/messages")
        assert settings.issuer == "https://api.botframework.com"


async def test_a_single_tenant_bot_asks_its_own_tenant_for_the_token():
    async with PlatformRunner(plugin, {**GOOD, "tenant_id": "contoso.onmicrosoft.com"}, start=False) as running:
        assert running.client.settings.token_url == \
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"


@pytest.mark.parametrize("section, key", [
    ({"app_id": "has spaces in it", "app_password": SECRET}, "app_id"),
    ({"app_id": GOOD["app_id"], "app_password": "  "}, "app_password"),
    ({**GOOD, "path": "api/messages"}, "path"),
    ({**GOOD, "token_url": "ftp://x"}, "token_url"),
    ({**GOOD, "max_body_bytes": 10}, "max_body_bytes"),
])
async def test_a_mistake_names_the_key_and_never_the_secret(section, key):
    with pytest.raises(ConfigError) as refused:
        async with PlatformRunner(plugin, section, start=False):
            pass
    assert f"teams.{key}" in str(refused.value) and SECRET not in str(refused.value)
