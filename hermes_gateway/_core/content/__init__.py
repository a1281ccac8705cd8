"""What a person sent, as the model reads it: files fetched within limits, turned into text or image parts.

Beneath the turn that answers a message (:mod:`..conversation`), the terminal
chat and the web console's history, which all read a message's content the
same way: :mod:`.turn_content` (one turn's messages as the model's content and
as stored), :mod:`.history_media` (the history's files for the model again),
:mod:`.file_content` (each kind of file's converter and gate), and the steps
they use (:mod:`.downloads`, :mod:`.document_text`, :mod:`.image_parts`,
:mod:`.local_files`).
"""
