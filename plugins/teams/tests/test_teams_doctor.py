"""``hermes-gateway doctor`` for Teams, against the emulator: the credentials and the signing keys."""

from __future__ import annotations

from dataclasses import replace

from hermes_teams.doctor import doctor
from hermes_teams.settings import TeamsSettings


def settings_of(api, **more):
    return TeamsSettings(**api.settings(**more))


async def test_doctor_says_what_works(api):
    lines = await doctor(settings_of(api))
    assert [ok for ok, _ in lines] == [True, True], lines
    assert api.app_id in lines[0][1] and "/api/messages" in lines[1][1]


async def test_doctor_names_a_refused_secret_and_unreachable_keys_without_the_secret(api):
    bad = replace(settings_of(api), app_password="not-the-secret-42",
                  openid_metadata_url=api.base_url + "/nowhere")
    lines = await doctor(bad)
    assert [ok for ok, _ in lines] == [False, False], lines
    assert "app_password" in lines[0][1] and "openid_metadata_url" in lines[1][1]
    assert "not-the-secret-42" not in str(lines)
