"""The console's static files: every one ships in a non-editable install, and each page links the shell."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import hermes_gateway._core.web as web_package
from hermes_gateway._core.web.pages import load_static

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(web_package.__file__).parent / "static"


def test_every_static_file_is_in_the_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = data["hermes_gateway._core.web"]
    files = [p.relative_to(STATIC.parent).as_posix() for p in STATIC.rglob("*") if p.is_file()
             and "__pycache__" not in p.parts]
    assert files and all(any(fnmatch.fnmatch(f, pattern) for pattern in patterns) for f in files), (files, patterns)
    assert all(p.parent == STATIC for p in STATIC.rglob("*") if p.is_file()), "the server serves one level only"


def test_the_served_files_are_the_static_folder_and_every_page_links_chat_and_dashboard():
    served = load_static()
    assert set(served) == {p.name for p in STATIC.iterdir() if p.is_file()}
    for name in ("index.html", "dashboard.html"):
        page = served[name].body.decode()
        assert 'href="/ui"' in page and 'href="/ui/dashboard"' in page
    for name, file in served.items():
        if name.endswith(".html"):
            html = file.body.decode()
            assert "<script>" not in html and not re.search(r"\son\w+=", html), name  # the CSP allows no inline script
