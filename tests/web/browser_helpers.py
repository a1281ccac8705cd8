"""Debian's Chromium driven by Playwright's Python client (never a downloaded browser).

``launch()`` starts the system's ``chromium`` headless (``--no-sandbox`` as
root, where Chromium's sandbox cannot start). The browser tests skip, in
one line, when no ``chromium`` is installed or Playwright is missing.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def launch_args() -> list[str]:
    return ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


async def launch(playwright: Any) -> Any:
    return await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=launch_args())


#: Installed in the page: every text a reply message showed, in order (a MutationObserver misses none,
#: however loaded the machine, where polling from the test could skip a step).
RECORD_STEPS = """() => {
  window.__steps = [];
  const log = document.getElementById('log');
  new MutationObserver(() => {
    const bots = log.querySelectorAll('.msg.bot');
    const last = bots[bots.length - 1];
    if (!last) return;
    const text = last.textContent;
    if (window.__steps[window.__steps.length - 1] !== text) window.__steps.push(text);
  }).observe(log, {childList: true, subtree: true, characterData: true});
}"""
