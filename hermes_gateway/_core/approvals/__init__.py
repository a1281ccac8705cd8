"""Approval of risky tools from the chat (issue 25, items 2-3).

- ``approval_policy`` (a module of its own beside the config's lowest parts): ``tools.approval`` (which
  tools, how long to wait, who may answer) and ``api_server.approvals``;
- :mod:`.choice`: the public contract pieces, :class:`Choice` (what a platform shows) and
  :class:`ChoiceAnswer` (the click that comes back);
- :mod:`.desk`: the open questions of one gateway, answered once, by the allowed person;
- :mod:`.answers`: taking a press, alone or across replicas (the coordination layer records the first);
- :mod:`.chat`: the approver of a chat turn (buttons, or ``/allow ID`` / ``/deny ID``);
- ``inbound.approval_commands``: those two commands (in the inbound package, whose commands they are);
- :mod:`.local`: the API server's approver (``api_server.approvals``) and the terminal's (y/n).
"""
