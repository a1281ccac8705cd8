"""``hermes-gateway doctor`` for Matrix against Synapse: a working token, a password, and a refused token."""

from __future__ import annotations

from hermes_matrix.doctor import doctor
from hermes_matrix.settings import MatrixSettings


async def test_doctor_accepts_a_token_and_a_password_and_names_a_refused_token(synapse):
    bot = synapse.register("bot")
    good = await doctor(MatrixSettings(homeserver=synapse.url, user_id=bot.user_id, access_token=bot.access_token))
    assert all(ok for ok, _ in good) and "access_token accepted" in good[-1][1], good
    by_password = await doctor(MatrixSettings(homeserver=synapse.url, user_id=bot.user_id, password=bot.password))
    assert by_password[-1] == (True, f"password accepted (logged in as {bot.user_id})")
    refused = await doctor(MatrixSettings(homeserver=synapse.url, user_id=bot.user_id, access_token="syt_nope"))
    assert refused[-1][0] is False and "M_UNKNOWN_TOKEN" in refused[-1][1] and "syt_nope" not in refused[-1][1]
    away = await doctor(MatrixSettings(homeserver="http://127.0.0.1:9", user_id=bot.user_id, access_token="t"))
    assert away == [(False, away[0][1])] and "cannot reach the homeserver" in away[0][1]
