"""Files in and out, through the whole gateway against Dovecot: what the person's mailbox shows."""

from __future__ import annotations


import hermes_email
from email_support import body, config, person_mail, until
from hermes_gateway.testing import TestGateway, samples


async def _count(mail, person, n):
    return len(await mail.inbox(person)) >= n


async def test_a_mailed_pdf_and_picture_are_read_and_a_tools_image_comes_back_attached(mail):
    bot, ann = mail.user("bot"), mail.user("ann")
    files = [("report.pdf", "application/pdf", samples.pdf("Quarterly numbers are up")),
             ("dot.png", "image/png", samples.png(4, 4, (200, 10, 10)))]
    asked, raw = person_mail(ann, bot, "describe: what did I send?", subject="Files", files=files)
    qr_id, qr = person_mail(ann, bot, 'tool: qr_code {"text": "hello"}', subject="A code")
    async with TestGateway(config(mail, bot), hermes_email.plugin):
        await mail.send(bot, raw)
        await until(lambda: _count(mail, ann, 1), lambda: mail.inbox(ann))
        await mail.send(bot, qr)
        await until(lambda: _count(mail, ann, 3), lambda: mail.inbox(ann))
    read, text, picture = [m for m, _seen in await mail.inbox(ann)]
    assert "report.pdf" in body(read) and "Quarterly numbers are up" in body(read), body(read)
    assert read["In-Reply-To"] == asked
    assert "The tool qr_code returned" in body(text) and text["In-Reply-To"] == qr_id
    [(name, data)] = [(p.get_filename(), p.get_payload(decode=True)) for p in picture.iter_attachments()]
    assert name.endswith(".png") and data.startswith(b"\x89PNG")
    assert picture["In-Reply-To"] == qr_id and picture["Subject"] == "Re: A code"


async def test_an_attachment_over_the_limit_costs_one_line_and_the_words_are_answered(mail):
    bot, ann = mail.user("bot"), mail.user("ann")
    big = [("big.pdf", "application/pdf", samples.pdf("x") + b"\0" * 300_000)]
    _id, raw = person_mail(ann, bot, "echo: the words still count", files=big)
    limits = {"media": {"inbound_max_bytes": {"document": 100_000}}}
    async with TestGateway({**config(mail, bot), **limits}, hermes_email.plugin):
        await mail.send(bot, raw)
        await until(lambda: _count(mail, ann, 1), lambda: mail.inbox(ann))
    [(reply, _seen)] = await mail.inbox(ann)
    assert "the words still count" in body(reply)
    assert "big.pdf" in body(reply), body(reply)  # the one line saying the file was not read
