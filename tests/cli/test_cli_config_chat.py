"""``hermes-gateway config --chat PLATFORM:CHAT[:USER]``: one chat's effective settings and where each came from,
including the chat's own /model and /persona choices kept in the store. Runs the real command in a subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from cli_helpers import DEADLINE, child_env
from hermes_gateway._core.store import ConversationKey, SQLiteStore

CONFIG = """\
model: {name: small, system_prompt: "Be helpful."}
models: {big: {name: big-model}}
personas: {pirate: {system_prompt: "Arr, matey.", model: big}}
access: {admins: ["telegram:42"]}
conversation: {busy: queue}
overrides:
  - match: {platform: telegram, chat_kind: group}
    conversation: {busy: interrupt}
  - match: {platform: telegram, chat: "-100"}
    model: big
    tools: {deny: ["calc*"]}
    streaming: {enabled: false}
store: {path: STATE}
"""


def hermes(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "hermes_gateway", *args], capture_output=True, text=True,
                          timeout=DEADLINE * 4, env=child_env(home), cwd=tmp_path)


def write_config(tmp_path: Path) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG.replace("STATE", str(tmp_path / "state.db")), encoding="utf-8")
    return str(path)


def test_a_group_with_an_override_shows_each_setting_and_its_origin(tmp_path):
    config = write_config(tmp_path)
    done = hermes(tmp_path, "config", "--config", config, "--chat", "telegram:-100:42", "--kind", "group")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "# effective settings for telegram:-100, user 42, group"
    assert f"model: big (big-model)  # from {config} (overrides[1])" in lines
    assert f"system_prompt: 'Be helpful.'  # from {config} (model.system_prompt)" in lines
    assert f"tools: current_time, qr_code  # deny from {config} (overrides[1])" in lines
    assert any(line.startswith(f"streaming: enabled off (from {config} (overrides[1]))") for line in lines)
    assert f"conversation.busy: interrupt  # from {config} (overrides[0])" in lines
    assert "role: admin  # from access.admins" in lines


def test_a_private_chat_without_overrides_shows_the_config_and_the_stored_persona(tmp_path):
    config = write_config(tmp_path)

    async def choose() -> None:
        store = SQLiteStore(tmp_path / "state.db")
        await store.set_chat_setting(ConversationKey("telegram", "5"), "persona", "pirate")
        await store.close()
    asyncio.run(choose())
    done = hermes(tmp_path, "config", "--config", config, "--chat", "telegram:5:9", "--kind", "private")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"model: big (big-model)  # from {config} (personas.pirate.model)" in lines
    assert "persona: pirate  # from this chat's /persona" in lines
    assert f"system_prompt: 'Arr, matey.'  # from {config} (personas.pirate)" in lines
    assert f"conversation.busy: queue  # from {config} (conversation.busy)" in lines
    assert "role: everyone" in lines


def test_a_malformed_chat_is_one_line_and_exit_2(tmp_path):
    done = hermes(tmp_path, "config", "--config", write_config(tmp_path), "--chat", "telegram")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "hermes-gateway: --chat takes PLATFORM:CHAT or PLATFORM:CHAT:USER, got 'telegram'\n"


def test_config_shows_the_named_models_with_their_keys_masked(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("models:\n  big: {base_url: 'https://user:pw-secret@api.example/v1', name: big-model, "
                    "api_key: sk-named-secret}\npersonas: {pirate: Arr.}\n", encoding="utf-8")
    done = hermes(tmp_path, "config", "--config", str(path))
    assert done.returncode == 0, done.stderr
    assert "sk-named-secret" not in done.stdout and "pw-secret" not in done.stdout
    assert "  big:\n    base_url: https://***@api.example/v1\n    name: big-model\n    api_key: '***'" in done.stdout
    assert "personas:\n  pirate:\n    system_prompt: Arr." in done.stdout
