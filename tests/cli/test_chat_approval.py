"""The terminal chat asks y/n before a tool under ``tools.approval.require`` runs (a real pty, the demo model)."""

from __future__ import annotations

from cli_helpers import write_config
from test_chat_interactive import at_prompt, last_box

QUESTION = 'Run the tool calculate {"expression": "6 * 7"}? [y/N]'


def start(terminal, tmp_path):
    config = write_config(tmp_path, tokens_per_second=50, streaming=True)
    with config.open("a", encoding="utf-8") as f:
        f.write("tools:\n  approval:\n    require: [calc*]\n    timeout: 20\n")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)
    term.enter('tool: calculate {"expression": "6 * 7"}')
    term.wait_for(lambda s: QUESTION in s)
    return term


def test_yes_runs_the_tool(terminal, tmp_path):
    term = start(terminal, tmp_path)
    term.enter("y")
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    assert last_box(screen)[0] == ["The tool calculate returned: 42"]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_anything_else_is_a_no_and_the_model_hears_denied(terminal, tmp_path):
    term = start(terminal, tmp_path)
    term.enter("")
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    assert "denied by the user" in " ".join(last_box(screen)[0])
    assert "returned: 42" not in screen
    term.ctrl("d")
    assert term.wait_exit() == 0
