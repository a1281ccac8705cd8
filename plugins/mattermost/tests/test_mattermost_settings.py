"""``platforms.mattermost`` parsed by the core: mistakes in one line naming the key, secrets never shown; the doctor."""

from __future__ import annotations

import pytest

from hermes_gateway import ConfigError
from hermes_gateway.testing import PlatformRunner
from hermes_mattermost import plugin
from hermes_mattermost.doctor import doctor
from hermes_mattermost.emulator import BOT_TOKEN
from hermes_mattermost.settings import MattermostSettings

SECRET = "s3cretvalue000000000000000"


@pytest.mark.parametrize("section, key", [
    ({"url": "chat.example.org", "token": SECRET}, "url"),
    ({"url": "https://chat.example.org", "token": "Bearer " + SECRET}, "token"),
    ({"url": "https://chat.example.org", "token": "has spaces in it " + SECRET}, "token"),
    ({"url": "https://chat.example.org", "token": SECRET, "actions_url": "gateway:8080"}, "actions_url"),
    ({"url": "https://chat.example.org", "token": SECRET, "actions_secret": "short"}, "actions_secret"),
    ({"url": "https://chat.example.org", "token": SECRET, "api_timeout": 0}, "api_timeout"),
    ({"url": "https://chat.example.org"}, "token"),
])
def test_a_bad_section_is_one_line_naming_the_key_without_the_secret(section, key):
    with pytest.raises(ConfigError) as caught:
        PlatformRunner(plugin, settings=section).build()
    text = str(caught.value)
    assert f"platforms.mattermost.{key}" in text and "\n" not in text and SECRET not in text


def test_the_url_is_normalised():
    runner = PlatformRunner(plugin, settings={"url": "https://chat.example.org/api/v4/", "token": SECRET})
    client = runner.build()
    assert client.settings.api == "https://chat.example.org/api/v4"
    assert SECRET not in repr(client.settings)


async def test_the_doctor_says_what_works_and_what_to_fix(mm):
    good = await doctor(MattermostSettings(url=mm.base_url, token=BOT_TOKEN))
    assert [ok for ok, _ in good] == [True, True, True] and "@hermes (a bot)" in good[0][1]
    bad = await doctor(MattermostSettings(url=mm.base_url, token=SECRET))
    assert bad[0][0] is False and "token" in bad[0][1] and SECRET not in bad[0][1]
    away = await doctor(MattermostSettings(url="http://127.0.0.1:9", token=SECRET))
    assert away[0][0] is False and "platforms.mattermost.url" in away[0][1]
