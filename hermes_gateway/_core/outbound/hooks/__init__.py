"""Hooks from outside (issue 38, item 3): ``POST /hooks/NAME`` starts an agent turn whose reply goes into a chat.

* :mod:`..settings.hooks` — the ``hooks:`` entries of config.yaml;
* :mod:`.verify` — who may call: GitHub's signature, a generic HMAC-SHA256, a bearer token (constant time);
* :mod:`.body` — the body read within its ``max_bytes`` and a deadline, refused (413) the moment it is over;
* :mod:`.template` — the prompt with ``{body}`` and ``{json.path}`` filled in (no ``str.format`` on a stranger's data);
* :mod:`.plugin` — the built-in plugin: the route, the per-hook rate limit, the dedupe by delivery id, and the
  turn, run like a schedule's prompt (:func:`..deliver.run_prompt` in the chat's lane) and recorded in the chat.
"""
