"""``Platform.doctor`` for WhatsApp against the emulator: the phone number lookup with the token; a wrong token
or phone number id is one line with the fix."""

from __future__ import annotations

from hermes_whatsapp.doctor import doctor
from hermes_whatsapp.emulator import GraphApiEmulator
from hermes_whatsapp.plugin import PLATFORM
from hermes_whatsapp.settings import WhatsAppSettings
from whatsapp_test_support import APP_SECRET, PHONE_ID, TOKEN, VERIFY_TOKEN


def settings(meta, **changes) -> WhatsAppSettings:
    values = {"access_token": TOKEN, "phone_number_id": PHONE_ID, "app_secret": APP_SECRET,
              "verify_token": VERIFY_TOKEN, "api_base_url": meta.base_url, **changes}
    return WhatsAppSettings(**values)


async def test_the_token_and_number_work(meta):
    lines = await doctor(settings(meta))
    assert len(lines) == 1 and lines[0][0] is True, lines
    assert lines[0][1].startswith("access_token and phone_number_id work (phone number ")


async def test_a_wrong_token_is_one_line_with_the_fix():
    async with GraphApiEmulator("EAAGsomeOtherTokenZZZZZZZZZZZZZZZZZ", PHONE_ID, APP_SECRET) as elsewhere:
        lines = await doctor(settings(elsewhere))
    assert lines == [(False, "access_token: Meta refused it (190 / 401): create a new system user token with "
                             "whatsapp_business_messaging and set platforms.whatsapp.access_token")]
    assert TOKEN not in repr(lines)


async def test_a_wrong_phone_number_id(meta):
    lines = await doctor(settings(meta, phone_number_id="999999999999999"))
    assert lines == [(False, "phone_number_id 999999999999999: the Graph API does not know it for this token: copy "
                             "the Phone number ID from the app's WhatsApp > API Setup")]


def test_the_platform_declares_it():
    assert PLATFORM.doctor is doctor
