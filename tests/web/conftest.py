"""The web console tests (helpers in ``web_helpers``; the browser's fixtures in ``test_web_browser``)."""
