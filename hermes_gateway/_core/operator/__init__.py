"""Running one bot for many people (issue 23): per-chat models and personas, admins, pairing, usage.

Everything here is core: a platform plugin learns nothing new. The pieces,
each in its own module:

* :mod:`..settings.operator` — ``models:``, ``personas:``, ``access:``, ``commands:``,
  ``overrides:``, ``usage:`` and ``pricing:``, parsed with one-line errors;
* :mod:`.roles` — who is an admin, and who may run which command;
* :mod:`.overrides` — the ``overrides:`` entries that apply to a chat, layered;
* :mod:`.profile` — what a turn in a given chat runs with (model, system
  prompt, tools) and where each came from;
* :mod:`.turns` — before a turn (its agent, its streaming settings) and after
  it (its usage); a chat's choices are read from the conversation store;
* :mod:`.commands` — ``/model``, ``/persona``, ``/whoami``, ``/approve``,
  ``/revoke``, ``/usage``;
* :mod:`.gate` — unknown users (``access.unknown_users``), pairing, and the
  per-user rate limit, asked by the inbound runtime;
* :mod:`.pairing`, :mod:`.store_ops` — pairing codes and their store operations;
* :mod:`.usage` — usage totals, the footer, costs and the CLI's table;
* :mod:`.explain` — ``hermes-gateway config --chat``.

What the store keeps for them (chat choices, approvals, pairing codes,
usage) is :mod:`hermes_gateway._core.store.operator_records`.
"""
