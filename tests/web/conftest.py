"""The web console tests (helpers in ``web_helpers``; Chromium in ``browser_helpers``).

``browser``: one headless Chromium per test, for the browser test modules
(each skips, in one line, before asking for it when Chromium or Playwright is
missing: Playwright is imported only here, inside the fixture).
"""

from __future__ import annotations

import pytest
from browser_helpers import launch


@pytest.fixture
async def browser():
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await launch(playwright)
        try:
            yield chromium
        finally:
            await chromium.close()
