"""``/model``, ``/persona``, ``/whoami`` and roles, seen from the chat and at the upstream.

Every check reads what a person would see (the reference platform's screen)
and what the upstream was sent (a recording OpenAI-compatible server).
"""

from __future__ import annotations

from operator_helpers import ADMIN, PERSON, config, gateway, last_line, reference, say, system_prompt
from scripted_upstream import ScriptedUpstream, text_stream


async def test_a_persona_switch_changes_the_system_prompt_for_that_chat_only():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/persona pirate")
            assert last_line(ref, "a") == "🎭 This chat now talks as pirate."
            await say(gw, "a", "hello")
            await say(gw, "b", "hello")
    prompts = [system_prompt(r.body) for r in up.requests]
    assert prompts == ["You are a pirate. Arr.", "You are the default assistant."]
    assert [r.body["model"] for r in up.requests] == ["small-model", "small-model"]


async def test_a_persona_with_a_model_uses_it_and_default_goes_back():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/persona poet")
            await say(gw, "a", "hello")
            await say(gw, "a", "/persona default")
            assert last_line(ref, "a") == "🎭 Back to the default persona."
            await say(gw, "a", "hello again")
    assert [(r.body["model"], system_prompt(r.body)) for r in up.requests] == [
        ("big-model", "You answer in verse."), ("small-model", "You are the default assistant.")]


async def test_model_from_a_non_admin_is_refused_in_one_line_and_changes_nothing():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/model big", user=PERSON)
            assert last_line(ref, "a") == "⛔ /model is for admins only. (/whoami shows your id.)"
            await say(gw, "a", "hello", user=PERSON)
    assert [r.body["model"] for r in up.requests] == ["small-model"]


async def test_model_from_an_admin_changes_the_model_the_upstream_is_asked_for():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/model", user=ADMIN)
            listing = last_line(ref, "a")
            assert "• small-model ← current" in listing and "• big (big-model)" in listing
            await say(gw, "a", "/model big", user=ADMIN)
            assert last_line(ref, "a") == "🧠 This chat now uses big."
            await say(gw, "a", "hello", user=PERSON)   # the choice is the chat's, whoever writes next
            await say(gw, "b", "hello", user=PERSON)
            await say(gw, "a", "/model nonsense", user=ADMIN)
            assert last_line(ref, "a") == "No model 'nonsense' here. /model lists them."
            await say(gw, "a", "/model default", user=ADMIN)
            await say(gw, "a", "hello", user=PERSON)
    assert [r.body["model"] for r in up.requests] == ["big-model", "small-model", "small-model"]


async def test_choices_survive_a_gateway_restart(tmp_path):
    ref = reference()
    data = config("", store={"path": str(tmp_path / "state.db")})
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        for section in ("model", ):
            data[section]["base_url"] = up.url
        data["models"]["big"]["base_url"] = up.url
        async with gateway(ref, data) as gw:
            await say(gw, "a", "/model big", user=ADMIN)
            await say(gw, "a", "/persona pirate")
        async with gateway(ref, data) as gw:  # a new process: only the SQLite file remembers
            await say(gw, "a", "hello")
    assert [(r.body["model"], system_prompt(r.body)) for r in up.requests] == [("big-model", "You are a pirate. Arr.")]


async def test_help_lists_only_what_the_asker_may_run():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url, commands={"persona": {"who": "admin"}})) as gw:
            await say(gw, "a", "/help", user=PERSON)
            person_help = last_line(ref, "a")
            await say(gw, "a", "/help", user=ADMIN)
            admin_help = last_line(ref, "a")
            await say(gw, "a", "/persona pirate", user=PERSON)
            assert last_line(ref, "a") == "⛔ /persona is for admins only. (/whoami shows your id.)"
    assert "/whoami" in person_help and "/model" not in person_help and "/persona" not in person_help
    assert "/model" in admin_help and "/persona" in admin_help and "/whoami" in admin_help
    assert up.requests == []


async def test_whoami_answers_everyone_with_their_ids_and_role():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/whoami", user=PERSON)
            person = last_line(ref, "a")
            await say(gw, "g", "/whoami", user=ADMIN, chat_kind="group")
            admin = last_line(ref, "g")
    assert person == f"platform: reference\nuser id: {PERSON}\nchat id: a\nrole: everyone"
    assert admin == f"platform: reference\nuser id: {ADMIN}\nchat id: g\nrole: admin"


async def test_persona_lists_them_and_marks_the_current_one():
    ref = reference()
    async with ScriptedUpstream(default=text_stream("ok")) as up:
        async with gateway(ref, config(up.url)) as gw:
            await say(gw, "a", "/persona")
            before = last_line(ref, "a")
            await say(gw, "a", "/persona pirate")
            await say(gw, "a", "/persona")
            after = last_line(ref, "a")
            await say(gw, "a", "/persona nobody")
            assert last_line(ref, "a") == "No persona 'nobody' here. /persona lists them."
    assert "Current: default." in before and "← current" not in before
    assert "• pirate — talks like a pirate ← current" in after
