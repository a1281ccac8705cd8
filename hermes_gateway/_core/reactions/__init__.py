"""Status reactions (issue 24 item 4): 👀 when a message is taken, 👍 when its reply is final, 😢 when it failed.

* :mod:`..settings.reactions` — the ``reactions:`` section and the check of its emoji against a platform's list;
* :mod:`.reactor` — sending one reaction through the chat's budget, never before a reply's first text
  would need the call, once, and forgetting it when it fails.

(The config imports :mod:`..settings.reactions`; :mod:`.reactor` needs the delivery core, so it is imported where used.)
"""
