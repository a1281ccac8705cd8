"""The answer to a message the model cannot use (a location, a contact card, a type WhatsApp calls unsupported).

Photos, documents, voice notes, audio, video and stickers are not among
them: they reach the core as attachments (:mod:`.inbound_media`).

Silence would leave the person wondering whether the bot is there at all.
The plugin hands such a message to the core as an ``Incoming`` with no text
and this ``notice``; the core answers it like any message: deduped by its
id (Meta redelivers), checked against the access lists, in its place in the
chat's queue, through the chat's budget.
"""

NOTICE = ("Sorry, I cannot read this kind of message. Please type your question, or send a photo, a document "
          "or a voice note.")
