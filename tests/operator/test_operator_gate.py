"""Pairing and the per-user rate limit, end to end: what the person sees, and what the model is asked.

Unknown user → a code → ``hermes-gateway pairing approve`` (or an admin's
``/approve``) → their next message is answered; a wrong or expired code
changes nothing; two replicas on one PostgreSQL honour each other's
approvals at once.
"""

from __future__ import annotations

import asyncio
import re

import aiohttp

from hermes_gateway._core.cli.main import main
from operator_helpers import ADMIN, PERSON, config, gateway, last_line, reference, say
from scripted_upstream import ScriptedUpstream, text_stream

CODE = re.compile(r"Your pairing code is ([A-Z0-9]{4}-[A-Z0-9]{4}) \(valid for 1 h\)")


def paired(up_url: str, store: dict | None = None, **access) -> dict:
    sections = {"store": store} if store else {}
    return config(up_url, access={"admins": [f"reference:{ADMIN}"], "unknown_users": "pair", **access}, **sections)


def code_on(ref, chat: str) -> str:
    match = CODE.search(last_line(ref, chat))
    assert match, last_line(ref, chat)
    return match.group(1)


async def test_an_unknown_user_gets_only_a_code_and_once_approved_is_answered(tmp_path):
    ref = reference()
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"store:\n  path: {tmp_path / 'state.db'}\n")
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        data = paired(up.url, store={"path": str(tmp_path / "state.db")})
        async with gateway(ref, data) as gw:
            await say(gw, "dm", "hello?")
            code = code_on(ref, "dm")
            await say(gw, "dm", "hello??")            # asking again: no second code within the minute
            assert len(ref.chat("dm").screen) == 1 and up.requests == []
            listed = await asyncio.to_thread(_cli, "pairing", "list", "--config", str(config_file))
            assert code in listed[1] and f"reference:{PERSON}" in listed[1]
            assert (await asyncio.to_thread(_cli, "pairing", "approve", "WRONG-CODE", "--config",
                                            str(config_file)))[0] == 1
            await say(gw, "dm", "still me")
            assert len(ref.chat("dm").screen) == 1 and up.requests == []
            result = await asyncio.to_thread(_cli, "pairing", "approve", code.lower(), "--config", str(config_file))
            assert result == (0, f"approved reference:{PERSON}\n")
            await say(gw, "dm", "hello, now?")
            assert last_line(ref, "dm") == "welcome"
            revoked = await asyncio.to_thread(_cli, "pairing", "revoke", f"reference:{PERSON}", "--config",
                                              str(config_file))
            assert revoked == (0, f"revoked reference:{PERSON}\n")
            await say(gw, "dm", "and now?")
            assert CODE.search(last_line(ref, "dm"))      # back to a code
    assert len(up.requests) == 1


def _cli(*argv: str) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


async def test_a_code_is_never_logged_in_full(caplog):
    ref = reference()
    caplog.set_level("DEBUG")
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        async with gateway(ref, paired(up.url)) as gw:
            await say(gw, "dm", "hi", user="3000")
            code = code_on(ref, "dm")
            await say(gw, "admin-dm", f"/approve {code}", user=ADMIN)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"pairing code {code[:2]}…" in logged
    assert code not in logged and code.replace("-", "") not in logged


async def test_an_admin_approves_in_chat_and_a_non_admin_cannot():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        async with gateway(ref, paired(up.url)) as gw:
            await say(gw, "dm", "hi", user="3000")
            code = code_on(ref, "dm")
            await say(gw, "admin-dm", f"/approve {code}", user=PERSON)   # PERSON is no admin (nor approved)
            assert up.requests == []
            await say(gw, "admin-dm", "/approve ABCD-EFGH", user=ADMIN)
            assert last_line(ref, "admin-dm") == "That code is not valid (wrong, used or expired). Nobody was approved."
            await say(gw, "admin-dm", f"/approve {code}", user=ADMIN)
            assert last_line(ref, "admin-dm") == "✅ Approved reference:3000. Their next message will be answered."
            await say(gw, "dm", "hi again", user="3000")
            assert last_line(ref, "dm") == "welcome"
    assert len(up.requests) == 1


async def test_an_expired_code_approves_nobody():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        async with gateway(ref, paired(up.url, pairing_ttl=1)) as gw:
            await say(gw, "dm", "hi", user="3000")
            code = re.search(r"code is (\S+) ", last_line(ref, "dm")).group(1)
            await asyncio.sleep(1.2)
            await say(gw, "admin-dm", f"/approve {code}", user=ADMIN)
            assert last_line(ref, "admin-dm").startswith("That code is not valid")
    assert up.requests == []


async def test_a_short_lived_code_says_its_real_lifetime():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        async with gateway(ref, paired(up.url, pairing_ttl=8)) as gw:
            await say(gw, "dm", "hi", user="3000")
            assert "(valid for 8 s)" in last_line(ref, "dm"), last_line(ref, "dm")


def test_the_lifetime_a_code_states_is_never_longer_than_its_real_one():
    from hermes_gateway._core.operator.pairing import code_message

    said = {ttl: re.search(r"valid for ([^)]+)", code_message("ABCDEFGH", ttl)).group(1)
            for ttl in (1, 8, 59.6, 90, 119, 120, 150, 3599.9999999, 3600.0000001, 5400, 86400, 90061)}
    assert said == {1: "1 s", 8: "8 s", 59.6: "60 s", 90: "90 s", 119: "119 s", 120: "2 min", 150: "2 min",
                    3599.9999999: "1 h", 3600.0000001: "1 h", 5400: "1 h 30 min", 86400: "24 h",
                    90061: "25 h 1 min"}


async def test_in_a_group_an_unknown_user_is_ignored_without_a_code():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        async with gateway(ref, paired(up.url)) as gw:
            await say(gw, "group", "hi bot", user="3000", chat_kind="group")
            await say(gw, "group", "hi bot", user=ADMIN, chat_kind="group")
    assert ref.chat("group").screen == ["welcome"] and len(up.requests) == 1


async def test_allowed_users_without_pairing_ignore_everyone_else_silently():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        data = config(up.url, platforms={"reference": {"enabled": True, "allowed_users": [PERSON]}})
        async with gateway(ref, data) as gw:
            await say(gw, "dm1", "hi", user="3000")
            await say(gw, "dm2", "hi", user=PERSON)
            await say(gw, "dm3", "hi", user=ADMIN)   # admins always get through
    assert ref.chat("dm1").screen == [] and ref.chat("dm2").screen == ["welcome"]
    assert ref.chat("dm3").screen == ["welcome"]


async def test_two_replicas_on_postgres_honour_each_others_approvals(postgres_url):
    one_ref, two_ref = reference(), reference()
    async with ScriptedUpstream(default=text_stream("welcome")) as up:
        data = paired(up.url, store={"url": postgres_url})
        async with gateway(one_ref, data) as one, gateway(two_ref, data) as two:
            await say(one, "dm", "hi", user="3000")
            code = code_on(one_ref, "dm")
            await say(two, "admin-dm", f"/approve {code}", user=ADMIN)
            assert last_line(two_ref, "admin-dm").startswith("✅ Approved reference:3000")
            await say(one, "dm", "hi again", user="3000")
            assert last_line(one_ref, "dm") == "welcome"
            await say(two, "admin-dm", "/revoke 3000", user=ADMIN)
            await say(one, "dm", "and again", user="3000")
            assert CODE.search(last_line(one_ref, "dm"))


async def test_past_the_per_user_limit_messages_are_dropped_with_one_polite_line_and_counted():
    ref = reference()
    data = {"model": {"demo": {"tokens_per_second": 0}}, "platforms": {"reference": {"enabled": True}},
            "access": {"max_messages_per_minute": 2, "admins": [f"reference:{ADMIN}"]}}
    from hermes_gateway.testing import TestGateway

    async with TestGateway(data, ref, api_server=True) as gw:
        replies = [await say(gw, "dm", f"echo: n{i}") for i in range(5)]
        await say(gw, "other", "echo: someone else", user="4000")  # another person is not affected
        await say(gw, "dm", "echo: admin", user=ADMIN)  # nor an admin
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{gw.url}/metrics") as response:
                metrics = await response.text()
    polite = [line for line in ref.chat("dm").screen if line.startswith("🐢")]
    assert ref.chat("dm").screen[:2] == ["n0", "n1"] and len(polite) == 1
    assert "at most 2 messages a minute" in polite[0]
    assert [r is not None and r.delivered for r in replies[:2]] == [True, True]
    assert replies[2:] == [None, None, None]
    assert ref.chat("other").screen == ["someone else"] and ref.chat("dm").screen[-1] == "admin"
    assert 'hermes_inbound_rate_limited_total{platform="reference"} 3.0' in metrics


async def test_an_approved_users_messages_keep_their_order_through_the_check():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, paired(up.url)) as gw:
            await gw._gateway.store.approve_user("reference", "3000", "test", 0.0)
            from hermes_gateway import Incoming

            futures = [gw.receive(Incoming("reference", "dm", f"message {i}", sender_id="3000", update_id=f"o{i}"))
                       for i in range(4)]
            await asyncio.gather(*futures)
    sent = [r.body["messages"][-1]["content"] for r in up.requests]
    assert "\n\n".join(sent).split("\n\n") == [f"message {i}" for i in range(4)]
