"""``hermes-gateway run`` as a user runs it, killed with SIGKILL between a mail's receipt and its reply.

The SMTP server holds the reply (it never reaches the person) while the
process is killed; the next run finds the reply the crash left, which sent
nothing (email cannot edit), and answers the mail again, once: the
person's mailbox shows one reply, and the mail turns \\Seen only then.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import yaml

from email_support import body, person_mail, until
from hermes_email.servers import PASSWORD


def write_config(tmp_path, mail, bot):
    settings = mail.settings(bot, password="${EMAIL_PASSWORD}")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"model": {"demo": {"tokens_per_second": 0}}, "api_server": {"enabled": False},
                                    "platforms": {"email": {"enabled": True, **settings}}}))
    return path


def environment(tmp_path):
    env = {**os.environ, "EMAIL_PASSWORD": PASSWORD, "HERMES_HOME": str(tmp_path / "home"),
           "HERMES_LOAD_PLUGINS": "email"}
    env.pop("HERMES_CONFIG", None)
    return env


async def run(tmp_path, mail, bot):
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--config", str(write_config(tmp_path, mail, bot)),
        env=environment(tmp_path), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    banner = await asyncio.wait_for(process.stdout.readline(), 60)
    assert b"email" in banner, banner
    return process


async def test_a_kill_between_receipt_and_reply_loses_nothing_and_answers_once(mail, tmp_path):
    bot, ann = mail.user("bot"), mail.user("ann")
    asked, raw = person_mail(ann, bot, "echo: are you still there?", subject="Crash")
    mail.smtp.hold()
    first = await run(tmp_path, mail, bot)
    try:
        await mail.send(bot, raw)
        assert await asyncio.to_thread(mail.smtp.waiting.wait, 60), "the reply never reached the SMTP server"
        first.send_signal(signal.SIGKILL)
        await first.wait()
    finally:
        mail.smtp.release()
        if first.returncode is None:
            first.kill()
            await first.wait()
    assert await mail.inbox(ann) == []
    assert [seen for _m, seen in await mail.inbox(bot)] == [False]  # nothing lost: still unseen
    second = await run(tmp_path, mail, bot)
    try:
        await until(lambda: _count(mail, ann), lambda: mail.inbox(ann))
        await until(lambda: _seen(mail, bot), lambda: mail.inbox(bot))
        second.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(second.communicate(), 60)
    finally:
        if second.returncode is None:
            second.kill()
            await second.wait()
    assert second.returncode == 0, err.decode()[-2000:]
    [reply] = [m for m, _seen in await mail.inbox(ann)]
    assert body(reply) == "are you still there?"
    assert reply["In-Reply-To"] == asked and reply["Subject"] == "Re: Crash"
    assert PASSWORD.encode() not in err


async def _count(mail, person):
    return len(await mail.inbox(person)) >= 1


async def _seen(mail, bot):
    return all(seen for _m, seen in await mail.inbox(bot))
