"""Through the whole gateway, against a real Dovecot and SMTP server: what a person's mailbox shows."""

from __future__ import annotations


import hermes_email
from email_support import body, config, person_mail, until
from hermes_gateway.testing import TestGateway


async def replies(mail, person):
    return [m for m, _seen in await mail.inbox(person)]


async def test_a_mail_is_answered_once_in_its_thread_and_marked_seen_after(mail):
    bot, ann = mail.user("bot"), mail.user("ann")
    first_id, raw = person_mail(ann, bot, "echo: hello from Ann", subject="Hello")
    async with TestGateway(config(mail, bot), hermes_email.plugin) as gateway:
        await mail.send(bot, raw)
        await until(lambda: _count(mail, ann, 1), lambda: replies(mail, ann))
        await until(lambda: _seen(mail, bot), lambda: mail.inbox(bot))
        [reply] = await replies(mail, ann)
        assert body(reply) == "hello from Ann"
        assert reply["In-Reply-To"] == first_id and reply["References"] == first_id
        assert reply["Subject"] == "Re: Hello" and reply["Auto-Submitted"] == "auto-replied"
        assert "hello from Ann" in reply.get_body(("html",)).get_content()
        # Ann answers the reply: the same conversation (one thread), threaded under both
        second_id, raw = person_mail(ann, bot, "echo: and again", subject="Re: Hello",
                                     in_reply_to=reply["Message-ID"], references=f"{first_id} {reply['Message-ID']}")
        await mail.send(bot, raw)
        await until(lambda: _count(mail, ann, 2), lambda: replies(mail, ann))
        chat = hermes_email.inbound.thread_chat_id(first_id)

        async def history():
            return [m["content"] for m in await gateway.history("email", chat)]
        await until(lambda: _has(history, 4), history)
        assert await history() == ["echo: hello from Ann", "hello from Ann", "echo: and again", "and again"]
    first_reply, second = await replies(mail, ann)  # one reply per mail, no more
    assert first_reply["Message-ID"] == reply["Message-ID"]
    assert second["In-Reply-To"] == second_id
    assert second["References"].split() == [first_id, reply["Message-ID"], second_id]
    assert second["Subject"] == "Re: Hello"


async def _has(read, n):
    return len(await read()) >= n


async def _count(mail, person, n):
    return len(await mail.inbox(person)) >= n


async def _seen(mail, bot):
    return all(seen for _m, seen in await mail.inbox(bot))


async def test_automatic_mail_lists_and_strangers_are_never_answered(mail):
    bot, ann, stranger = mail.user("bot"), mail.user("ann"), mail.user("stranger")
    sent = [
        person_mail(ann, bot, "echo: I am on vacation", headers={"Auto-Submitted": "auto-replied"}),
        person_mail(ann, bot, "echo: bulk", headers={"Precedence": "bulk"}),
        person_mail(ann, bot, "echo: list", headers={"List-Id": "<news.example.org>"}),
        person_mail(ann, bot, "echo: unsubscribe", headers={"List-Unsubscribe": "<mailto:u@example.org>"}),
        person_mail(ann, bot, "echo: bounce", headers={"Return-Path": "<>"}),
        person_mail(stranger, bot, "echo: let me in"),
        person_mail(ann, bot, "echo: the one to answer", headers={"Auto-Submitted": "no"}),
    ]
    async with TestGateway(config(mail, bot, allowed_senders=[ann]), hermes_email.plugin) as gateway:
        for _id, raw in sent:
            await mail.send(bot, raw)
        await until(lambda: _count(mail, ann, 1), lambda: replies(mail, ann))
        client = gateway.client("email")
        await until(lambda: _position(client, 7), lambda: client.context.get_value("position"))
    assert [body(m) for m in await replies(mail, ann)] == ["the one to answer"]
    assert await replies(mail, stranger) == []


async def _position(client, uid):
    return ((await client.context.get_value("position")) or {}).get("last_uid") == uid


async def test_replies_per_sender_per_hour_bounds_two_auto_responders(mail):
    bot, robot = mail.user("bot"), mail.user("robot")
    async with TestGateway(config(mail, bot, replies_per_sender_per_hour=2), hermes_email.plugin) as gateway:
        for i in range(4):  # a responder that answers everything, without the headers that say so
            await mail.send(bot, person_mail(robot, bot, f"echo: reply {i}", subject=f"loop {i}")[1])
        client = gateway.client("email")
        await until(lambda: _position(client, 4), lambda: client.context.get_value("position"))
        await until(lambda: _count(mail, robot, 2), lambda: replies(mail, robot))
    assert sorted(body(m) for m in await replies(mail, robot)) == ["reply 0", "reply 1"]
