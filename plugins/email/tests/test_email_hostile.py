"""Mail a stranger wrote: malformed, oversized or hostile costs one log line, never the receiving loop."""

from __future__ import annotations

import logging

import pytest

import hermes_email
from email_support import body, config, person_mail, until
from hermes_gateway.testing import PlatformRunner, TestGateway


async def _count(mail, person, n):
    return len(await mail.inbox(person)) >= n


async def test_malformed_and_oversized_mail_cost_one_line_each_and_the_next_mail_is_answered(mail, caplog):
    bot, ann = mail.user("bot"), mail.user("ann")
    hostile = [
        b"this is not a mail at all\r\n\r\n\xff\xfe garbage",                        # no headers, no sender
        b"From: <>\r\nSubject: =?x-unknown?B?////?=\r\n\r\nhi\r\n",                  # an empty sender
        b"From: ann <" + ann.encode() + b">\r\nMessage-ID: <big@x>\r\n\r\n" + b"A" * 40_000,  # over the limit
        (b"From: " + ann.encode() + b"\r\nReferences: " + b"<r@x> " * 2_500 + b"\r\nContent-Type: multipart/mixed;"
         b" boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain; charset=no-such-charset\r\n\r\necho: odd\r\n"),
    ]
    _id, good = person_mail(ann, bot, "echo: still here", subject="After the noise")
    caplog.set_level(logging.INFO, logger="hermes_email")
    async with TestGateway(config(mail, bot, max_message_bytes=20_000), hermes_email.plugin) as gateway:
        for raw in hostile:
            await mail.send(bot, raw)
        await mail.send(bot, good)
        await until(lambda: _count(mail, ann, 2), lambda: mail.inbox(ann))
        client = gateway.client("email")
        await until(lambda: _position(client, 5), lambda: client.context.get_value("position"))
    texts = sorted(body(m) for m, _seen in await mail.inbox(ann))
    assert texts == ["odd", "still here"]  # an unknown charset and a huge References still read
    skipped = [r.getMessage() for r in caplog.records if r.name.startswith("hermes_email") and "UID" in r.getMessage()]
    assert len(skipped) == 3, skipped
    assert all(len(line) < 300 and "\n" not in line for line in skipped), skipped


async def _position(client, uid):
    return ((await client.context.get_value("position")) or {}).get("last_uid") == uid


@pytest.mark.parametrize("key, value, expected", [
    ("imap_url", "https://mail.example.org", "imaps://mail.example.org:993"),
    ("imap_url", "imaps://user:pw@mail.example.org", "imaps://mail.example.org:993"),
    ("smtp_url", "smtp://mail.example.org:99999", "smtps://mail.example.org:465"),
    ("smtp_url", "mail.example.org", "smtps://mail.example.org:465"),
    ("address", "not an address", "bot@example.org"),
    ("allowed_senders", ["ann@example.org", "nobody"], "@example.org"),
])
def test_a_bad_setting_is_one_line_naming_the_key(key, value, expected):
    settings = {"imap_url": "imaps://mail.example.org", "smtp_url": "smtps://mail.example.org",
                "username": "bot", "password": "s3cret-Pass", "address": "bot@example.org", key: value}
    with pytest.raises(Exception) as failure:
        PlatformRunner(hermes_email.plugin, settings, start=False).build()
    text = str(failure.value)
    assert f"platforms.email.{key}" in text and expected in text and "\n" not in text, text
    assert "s3cret-Pass" not in text


def _nested(depth: int) -> bytes:
    opening = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (i, i) for i in range(depth))
    closing = b"".join(b"\r\n--b%d--\r\n" % i for i in reversed(range(depth)))
    return b"From: ann@example.org\r\nMIME-Version: 1.0\r\n" + opening + b"Content-Type: text/plain\r\n\r\nhi\r\n" + closing


def _parts(count: int) -> bytes:
    return (b'From: ann@example.org\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="p"\r\n\r\n'
            + b"--p\r\nContent-Type: application/octet-stream\r\n\r\nx\r\n" * count + b"--p--\r\n")


def test_a_mail_of_too_many_parts_or_sections_is_unreadable_before_it_is_parsed():
    """The standard library's parser spent 57 s on 100,000 empty parts (5 MB, far under max_message_bytes) on the
    event loop, and ~1 s on 1,000 nested sections before a RecursionError: such a mail is one reason at once."""
    from hermes_email.inbound import MAX_MULTIPARTS, MAX_PARTS, Unreadable, parse_mail

    with pytest.raises(Unreadable, match="over 1,000 MIME parts"):
        parse_mail(_parts(MAX_PARTS + 1), "<a@x>")
    with pytest.raises(Unreadable, match="over 100 multipart sections"):
        parse_mail(_nested(MAX_MULTIPARTS + 1), "<b@x>")
    assert len(parse_mail(_parts(40), "<c@x>").files) == 40  # a real mail's parts are read
    assert parse_mail(_nested(4), "<d@x>").text == "hi"
    sql = b"From: ann@example.org\r\nContent-Type: text/plain\r\n\r\n" + b"-- a comment\r\nSELECT 1;\r\n" * 3_000
    assert parse_mail(sql, "<e@x>").text.startswith("-- a comment")  # lines opening with "--" are not parts
