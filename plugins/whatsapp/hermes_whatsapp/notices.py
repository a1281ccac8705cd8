"""The answer to a message the model cannot read (a photo, a voice note, a sticker).

Silence would leave the person wondering whether the bot is there at all.
The plugin hands such a message to the core as an ``Incoming`` with no text
and this ``notice``; the core answers it like any message: deduped by its
id (Meta redelivers), checked against the access lists, in its place in the
chat's queue, through the chat's budget.
"""

NOTICE = "Sorry, I can only read text messages. Please type your question."
