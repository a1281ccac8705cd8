"""``hermes-gateway new-plugin NAME``: the scaffold installs, passes its own tests under plain pytest, and runs.

Tried as a plugin author would: scaffold into an empty folder, install the
distribution (into a folder of its own, put on ``PYTHONPATH``, so this
test changes nothing installed), run its tests with pytest-asyncio turned
off, see it in ``hermes-gateway plugins``, and answer one turn with
``hermes-gateway ask`` through its own emulator.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import yaml

from hermes_gateway._core.scaffold import scaffold


def run(args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """``acmechat`` scaffolded by the command and installed into a prefix of its own."""
    root = tmp_path_factory.mktemp("author")
    env = {**os.environ, "HERMES_HOME": str(root / "home")}
    env.pop("HERMES_LOAD_PLUGINS", None)  # the author's machine: every installed plugin loads
    made = run([sys.executable, "-m", "hermes_gateway", "new-plugin", "acmechat"], env=env, cwd=root)  # ./acmechat
    assert made.returncode == 0, made.stderr
    assert "pip install -e" in made.stdout
    prefix = root / "prefix"
    pip = run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed",
               "--prefix",
               str(prefix), str(root / "acmechat")], env=env, cwd=root)
    assert pip.returncode == 0, pip.stderr
    site = Path(sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)}))
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return root, env


def test_the_scaffold_is_a_distribution_with_plugin_emulator_tests_and_readme(tmp_path: Path) -> None:
    target = scaffold("acme_chat", tmp_path)
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert files == ["README.md", "hermes_acme_chat/__init__.py", "hermes_acme_chat/emulator.py",
                     "hermes_acme_chat/plugin.py", "pyproject.toml", "tests/test_acme_chat.py"]
    for path in target.rglob("*.py"):
        ast.parse(path.read_text())  # valid Python, no placeholder left
    text = "".join(p.read_text() for p in target.rglob("*") if p.is_file())
    assert "{{" not in text and "hermes_NAME" not in text
    assert 'acme_chat = "hermes_acme_chat:plugin"' in (target / "pyproject.toml").read_text()
    assert "class AcmeChatClient(PlatformClient)" in (target / "hermes_acme_chat/plugin.py").read_text()


def test_the_scaffold_marks_what_it_cannot_know_about_the_platform_as_placeholders(tmp_path: Path) -> None:
    """No sentence states an invented fact as the new platform's; each such place says FILL IN."""
    target = scaffold("acmechat", tmp_path)
    readme = (target / "README.md").read_text()
    plugin = (target / "hermes_acmechat" / "plugin.py").read_text()
    emulator = (target / "hermes_acmechat" / "emulator.py").read_text()
    for invented in ("arrive through a signed webhook", "Acmechat allows 1 a second", "Messages arrive at"):
        assert invented not in readme + plugin + emulator, invented
    assert "FILL IN" in readme and plugin.count("FILL IN") >= 5 and emulator.count("FILL IN") >= 2
    platform_block = plugin[plugin.index("PLATFORM = Platform("):]
    for field in ("max_message_length", "edit_interval", "budgets"):  # each declared limit is marked above it
        before = platform_block[:platform_block.index(field)]
        assert before.rstrip().splitlines()[-1].lstrip().startswith("#"), field
        assert "FILL IN" in before.split(")")[-1] or "FILL IN" in before, field


def test_the_scaffold_imports_only_the_public_surface(tmp_path: Path) -> None:
    target = scaffold("acmechat", tmp_path)
    for path in target.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                if name.startswith("hermes_gateway"):
                    assert name in ("hermes_gateway", "hermes_gateway.testing", "hermes_gateway.testing.conformance"), \
                        f"{path.name} imports {name}"


@pytest.mark.parametrize("name, why", [("Acme", "not a platform name"), ("1chat", "not a platform name"),
                                       ("a-b", "not a platform name")])
def test_a_bad_name_is_one_line(tmp_path: Path, name: str, why: str) -> None:
    made = run([sys.executable, "-m", "hermes_gateway", "new-plugin", name, "--dir", str(tmp_path / "x")],
               env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert made.returncode == 2 and why in made.stderr and made.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_folder_in_use_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "acmechat").mkdir()
    (tmp_path / "acmechat" / "mine.txt").write_text("keep me")
    made = run([sys.executable, "-m", "hermes_gateway", "new-plugin", "acmechat"],
               env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert made.returncode == 2 and "not empty" in made.stderr
    assert [p.name for p in (tmp_path / "acmechat").iterdir()] == ["mine.txt"]


def test_dir_is_the_plugins_own_folder_made_where_the_author_says(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "hermes-matrix"  # not named after the platform, and not there yet
    made = run([sys.executable, "-m", "hermes_gateway", "new-plugin", "matrix", "--dir", str(folder)],
               env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert made.returncode == 0, made.stderr
    assert (folder / "pyproject.toml").is_file() and (folder / "hermes_matrix" / "plugin.py").is_file()
    assert f"pip install -e {folder}" in made.stdout and not (tmp_path / "matrix").exists()
    again = run([sys.executable, "-m", "hermes_gateway", "new-plugin", "matrix", "--dir", str(folder)],
                env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert again.returncode == 2 and again.stderr.strip().endswith("already exists and is not empty; choose "
                                                                   "another --dir or name")


@pytest.mark.timeout(600)  # with the pip install of `installed` (run by whichever of its tests comes first)
def test_its_tests_pass_under_plain_pytest(installed: tuple[Path, dict[str, str]]) -> None:
    root, env = installed
    # one run (-v names each test's outcome), not a second one picking out the conformance check
    tested = run([sys.executable, "-m", "pytest", "-v", "-p", "no:asyncio", "-p", "no:cacheprovider",
                  "--rootdir", str(root / "acmechat"), str(root / "acmechat" / "tests")], env=env, cwd=root / "acmechat")
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-2000:]
    assert re.search(r"\b\d+ passed", tested.stdout), tested.stdout[-500:]
    assert re.search(r"test_conformance\[check_a_streamed_reply_lands_exactly\] PASSED", tested.stdout), \
        tested.stdout[-3000:]


@pytest.mark.timeout(600)  # as above: its subprocesses allow 240 s each
def test_it_shows_in_plugins_and_answers_ask_through_its_emulator(installed: tuple[Path, dict[str, str]]) -> None:
    root, env = installed
    listed = run([sys.executable, "-m", "hermes_gateway", "plugins"], env=env, cwd=root, timeout=60)
    assert re.search(r"^\s+acmechat\s+\(entry point of hermes-acmechat\)", listed.stdout, re.M), listed.stdout
    emulator = subprocess.Popen([sys.executable, "-m", "hermes_acmechat.emulator", "--port", "0", "--token", "tok-1"],
                                env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert emulator.stdout is not None
        line = emulator.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert url, line + (emulator.stderr.read() if emulator.poll() is not None and emulator.stderr else "")
        config = root / "config.yaml"
        config.write_text(yaml.safe_dump({"platforms": {"acmechat": {"enabled": True, "base_url": url.group(0),
                                                                     "token": "tok-1"}},
                                          "streaming": {"acmechat": True}}))
        asked = run([sys.executable, "-m", "hermes_gateway", "ask", "--config", str(config), "--platform", "acmechat",
                     "--chat", "42", "echo: hello from the scaffold"], env=env, cwd=root, timeout=120)
        assert asked.returncode == 0, asked.stderr
        deadline = time.monotonic() + 10
        shown = ""
        while "hello from the scaffold" not in shown and time.monotonic() < deadline:
            shown += emulator.stdout.readline()
        assert "[chat 42] hello from the scaffold" in shown, shown
        assert "tok-1" not in asked.stdout + asked.stderr
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
