"""``platforms.<name>.home_chat``: the chat a platform's ``--chat home`` (and a schedule's ``chat: home``) means."""

from __future__ import annotations

from ..config import Config
from ..errors import ConfigError

#: The word that stands for a platform's ``home_chat``.
HOME_WORD = "home"


def resolve_chat(config: Config, platform: str, chat: str) -> str:
    """``chat`` as given, or the platform's ``home_chat`` when it is ``home``.

    Raises a one-line :class:`ConfigError` naming the key when ``home`` is
    asked for and the platform has no ``home_chat``.
    """
    if chat != HOME_WORD:
        return str(chat)
    section = config.platforms.get(platform) or {}
    home = section.get("home_chat")
    if home is None or str(home).strip() == "":
        raise ConfigError(config.source, f"platforms.{platform}.home_chat",
                          f"a chat id, since 'home' was asked for as the chat of {platform}")
    return str(home).strip()
