"""``hermes-gateway doctor`` for email against the real servers: a working login, and a refused one named."""

from __future__ import annotations

import hermes_email
from hermes_gateway.testing import PlatformRunner


def settings_of(mail, bot, **more):
    return PlatformRunner(hermes_email.plugin, mail.settings(bot, **more), start=False).build().settings


async def test_doctor_says_both_servers_work_and_names_what_to_fix_when_the_password_is_wrong(mail):
    bot = mail.user("bot")
    lines = await hermes_email.PLATFORM.doctor(settings_of(mail, bot))
    assert [ok for ok, _ in lines] == [True, True], lines
    assert "IDLE" in lines[0][1]
    wrong = await hermes_email.PLATFORM.doctor(settings_of(mail, bot, password="not-the-password"))
    assert [ok for ok, _ in wrong] == [False, False], wrong
    assert wrong[0][1].startswith("imap_url/username/password") and "LOGIN" in wrong[0][1]
    assert all("not-the-password" not in text for _, text in wrong)
