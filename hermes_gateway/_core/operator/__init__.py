"""Running one bot for many people (issue 23): per-chat models and personas, admins and roles.

Everything here is core: a platform plugin learns nothing new. The pieces,
each in its own module:

* :mod:`.settings` — the ``models:``, ``personas:``, ``access:`` and
  ``commands:`` sections of ``config.yaml``, parsed with one-line errors;
* :mod:`.roles` — who is an admin, and who may run which command;
* :mod:`.choices` — a chat's own ``/model`` and ``/persona`` choices, kept in
  the conversation store (so they survive restarts and are shared by replicas);
* :mod:`.profile` — what a turn in a given chat runs with (model, system
  prompt) and where each came from;
* :mod:`.commands` — ``/model``, ``/persona``, ``/whoami``.
"""
