"""The gateway speaking first: ``send``, schedules and reminders (issue 24, items 1-3).

* :mod:`.send` — text and files into a chat through the delivery core
  (budgets, 429 backoff, exactly once), what ``hermes-gateway send`` runs;
* :mod:`.home` — ``platforms.<name>.home_chat``, the chat ``--chat home`` means;
* :mod:`..settings.outbound` — ``schedules:``, ``tools.reminders`` and ``reminders:`` of config.yaml;
* :mod:`.timing` — when a schedule's next occurrence is (``cron`` with croniter, or ``every``), in its time zone;
* :mod:`.claim` — one occurrence run once across replicas (the coordination layer) and restarts (the store);
* :mod:`.scheduler` — the loop a running gateway keeps, firing schedules and reminders;
* :mod:`.reminders` — the built-in ``remind`` tool and the ``/reminders`` and ``/cancel`` commands.
"""
