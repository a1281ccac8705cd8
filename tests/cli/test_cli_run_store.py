"""``hermes-gateway run`` with a database it cannot use: one line naming the file, the file left as it was."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from cli_helpers import DEADLINE, child_env


def test_run_refuses_a_file_that_is_not_a_database_in_one_line(tmp_path):
    state = tmp_path / "state.db"
    state.write_bytes(b"SQLite format 2\x00 ... something else entirely\n" * 50)
    before = hashlib.sha256(state.read_bytes()).hexdigest()
    config = tmp_path / "config.yaml"
    config.write_text(f"api_server:\n  port: 0\nstore:\n  url: sqlite:///{state}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "hermes_gateway", "run", "--config", str(config)],
                          capture_output=True, text=True, env=child_env(tmp_path / "home"), cwd=tmp_path,
                          timeout=DEADLINE)
    assert done.returncode == 1
    assert done.stderr == (f"hermes-gateway: {state}: not an SQLite database (or an encrypted one); "
                           "it was left untouched: move it aside to start afresh\n")
    assert hashlib.sha256(state.read_bytes()).hexdigest() == before
