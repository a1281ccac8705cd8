"""What a platform hands the core: an :class:`~.incoming.Incoming` message and its :class:`~.attachments.Attachment` s.

Plain values beneath every layer that reads them — the inbound runtime that
takes them, the turn that answers them, the operator's and voice's steps
in between — so none of those imports the inbound package for them.
"""
