"""What the gateway hears in a group besides what is addressed to it (issue 38), the same on every platform.

:mod:`.room`: the room's recent unaddressed messages, kept as context and
given to the model when the bot is addressed. :mod:`.bots`: messages from
other bots, ignored or answered within a loop guard. :mod:`.commands`:
``/forget``. The settings are ``groups:`` (:mod:`..settings.groups`) with
``overrides:`` applied per chat (:func:`.room.settings_for`).
"""
