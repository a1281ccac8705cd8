"""Slack events as the core's ``Incoming``: which ones are for the bot, and in which thread.

bolt acknowledges every event before this runs (Socket Mode ack or HTTP
200), so the model never holds up an ack. What is left here is deciding
what a person would call "a message to the bot", the same in both modes:

* DMs (``message`` in an IM), ``app_mention`` in channels, and messages in
  a thread the bot already replied in: remembered here while the process
  runs, and after a restart known from the conversation store (the bot's
  reply recorded a conversation keyed by the thread), asked once per thread
  (:meth:`EventReader.to_look_up`);
* never the bot's own posts (their echoes), edits, deletions, joins or any
  other ``subtype`` that is not someone writing; other bots' messages
  (``bot_id``, ``subtype: bot_message``) are handed on with ``from_bot``
  for the core's ``groups.bots`` to decide;
* shared files travel as ``attachments`` (:mod:`.inbound_files`), the
  message's words as their caption, fetched only if the core keeps the
  message; a message whose only files cannot be downloaded (deleted,
  hidden, external) and that has no words is answered with a short notice
  (the core's ``Incoming.notice``), never with silence;
* one user message gets one reply even when Slack sends both a ``message``
  and an ``app_mention`` for it (two event ids, one message ``ts``): the
  first one is handed on, the other dropped. The update id is the
  message's ``channel:ts``, the same for both events, for a redelivery and
  for the copy the catch-up reads from history (:mod:`.catch_up`): the core
  dedupes by it across restarts and replicas. An edit's is its event id.

The reply always goes into the message's thread: ``thread_id`` is the
message's ``thread_ts``, or its own ``ts`` when it starts one.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Mapping

from hermes_gateway import Incoming, forwarded_text

from .download import Downloads
from .inbound_files import attachments_of, unusable_only

#: Message subtypes that are still a person writing text.
PERSON_SUBTYPES = frozenset({None, "", "thread_broadcast", "file_share", "message_share"})
#: Shared (forwarded) messages read from one message, and the longest text kept of each.
MAX_SHARED = 5
MAX_SHARED_CHARS = 4_000
#: The answer to a message of files Slack no longer lets the bot download, and no words.
FILES_UNAVAILABLE_NOTICE = ("I can't open that file: Slack doesn't let me download it (it was deleted, is hidden "
                            "by the workspace's plan, or is a link to another service). Could you send it again, "
                            "or tell me in words what you would like?")
#: How many (channel, ts) pairs are remembered to pair a message with its app_mention.
PAIR_MEMORY = 2048
THREAD_MEMORY = 10000

KINDS = {"im": "im", "mpim": "group", "group": "group", "channel": "channel", "app_home": "im"}


class EventReader:
    """Turns event payloads into ``Incoming`` values; remembers the threads the bot is part of."""

    def __init__(self, downloads: Downloads, platform: str = "slack") -> None:
        """``downloads`` fetches the files of the messages the core keeps."""
        self.platform = platform
        self.downloads = downloads
        self.bot_user_id: str | None = None
        self.bot_id: str | None = None
        self.team_id: str | None = None
        self._first_event: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._threads: OrderedDict[tuple[str, str], tuple[str | None, str | None]] = OrderedDict()
        self._joined: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._not_joined: OrderedDict[tuple[str, str], None] = OrderedDict()   # asked the store: no

    # ---------------------------------------------------------------- threads

    def joined(self, channel: str, thread_ts: str | None) -> None:
        """The bot replied in this thread: later messages in it are for the bot."""
        if thread_ts:
            _remember(self._joined, (channel, thread_ts), None, THREAD_MEMORY)
            self._not_joined.pop((channel, thread_ts), None)

    def to_look_up(self, incoming: Incoming) -> bool:
        """Whether to ask the conversation store if the bot replied in this message's thread before
        (in an earlier run): a reply in a channel's thread, without a mention, in a thread not known
        here either way."""
        if incoming.mentioned or incoming.is_direct or not incoming.thread_id:
            return False
        if incoming.thread_id == incoming.message_id:  # a new message in the channel, not in a thread
            return False
        return (incoming.chat_id, incoming.thread_id) not in self._not_joined

    def looked_up(self, channel: str, thread_ts: str, replied: bool) -> None:
        """What the store said about a thread: remembered, so it is asked once per thread."""
        if replied:
            self.joined(channel, thread_ts)
        else:
            _remember(self._not_joined, (channel, thread_ts), None, THREAD_MEMORY)

    def recipient(self, channel: str, thread_ts: str | None) -> tuple[str | None, str | None]:
        """The person (and their team) whose message the reply in this thread answers."""
        return self._threads.get((channel, thread_ts or ""), (None, self.team_id))

    # ---------------------------------------------------------------- events

    def to_incoming(self, body: Mapping[str, Any], *, edit: bool = False) -> Incoming | None:
        """The ``Incoming`` for an ``event_callback`` body; None for what is not a person writing to the bot.

        A ``message_changed`` event (a person edited their message) becomes an edit of it (``edit_of``).
        """
        event = body.get("event") or {}
        if not edit and event.get("type") == "message" and event.get("subtype") == "message_changed":
            return self._edited(body, event)
        kind = event.get("type")
        if kind not in ("message", "app_mention"):
            return None
        bot_id = event.get("bot_id") or (event.get("bot_profile") or {}).get("id")
        from_bot = bool(bot_id) or event.get("subtype") == "bot_message"
        if event.get("subtype") not in PERSON_SUBTYPES and event.get("subtype") != "bot_message":
            return None
        if from_bot and (self.bot_id is None and self.bot_user_id is None or bot_id == self.bot_id):
            return None  # the bot's own post (or, before auth.test answered, one that could be)
        user = event.get("user") or (bot_id if from_bot else None)
        channel = event.get("channel")
        ts = event.get("ts")
        text = event.get("text") or ""
        if not user or not channel or not ts or (self.bot_user_id and user == self.bot_user_id):
            return None
        event_id = str(body.get("event_id") or "")
        if not edit:
            first = self._first_event.get((channel, ts))
            if first is not None and first != event_id:
                return None  # the message's other event (message + app_mention): answered once
            _remember(self._first_event, (channel, ts), event_id, PAIR_MEMORY)
        thread_ts = event.get("thread_ts") or ts
        team = event.get("team") or event.get("user_team") or body.get("team_id") or self.team_id
        _remember(self._threads, (channel, thread_ts), (user, team), THREAD_MEMORY)
        chat_kind = KINDS.get(event.get("channel_type") or "", "im" if channel.startswith("D") else "channel")
        mention = f"<@{self.bot_user_id}>" if self.bot_user_id else None
        mentioned = (kind == "app_mention" or (mention is not None and mention in text)
                     or (channel, thread_ts) in self._joined)
        if mention:
            text = re.sub(rf"^\s*{re.escape(mention)}[\s:,]*", "", text)
        shared = _shared_messages(event)
        if shared:
            text = f"{text}\n\n{shared}" if text.strip() else shared
        attachments = attachments_of(event, self.downloads)
        notice = FILES_UNAVAILABLE_NOTICE if not text.strip() and unusable_only(event) else None
        return Incoming(
            platform=self.platform,
            chat_id=channel,
            text=text,
            sender_id=user,
            update_id=(event_id or None) if edit else f"{channel}:{ts}",
            message_id=ts,
            thread_id=thread_ts,
            chat_kind=chat_kind,
            mentioned=mentioned,
            bot_name=self.bot_user_id,
            notice=notice,
            attachments=attachments,
            edit_of=ts if edit else None,
            from_bot=from_bot,
            sender_name=event.get("username") or (event.get("bot_profile") or {}).get("name")
            or (event.get("user_profile") or {}).get("display_name") or None,
        )

    def _edited(self, body: Mapping[str, Any], event: Mapping[str, Any]) -> Incoming | None:
        """``message_changed``: the person's message with its new text; None for the bot's own edits
        (``chat.update``), unfurls and other changes that leave the text as it was."""
        message = event.get("message")
        if not isinstance(message, Mapping):
            return None
        previous = event.get("previous_message")
        if isinstance(previous, Mapping) and previous.get("text") == message.get("text"):
            return None
        inner = {**message, "type": "message", "channel": event.get("channel"),
                 "channel_type": event.get("channel_type")}
        return self.to_incoming({**body, "event": inner}, edit=True)


def _remember(memory: "OrderedDict[Any, Any]", key: Any, value: Any, size: int) -> None:
    memory[key] = value
    memory.move_to_end(key)
    while len(memory) > size:
        memory.popitem(last=False)


def _shared_messages(event: Mapping[str, Any]) -> str:
    """The messages a person shared (forwarded) with theirs, quoted for the model.

    Slack carries a shared message as an attachment marked ``is_share`` (its ``text``, ``author_name``), the
    person's own words (often none) in ``text``: the message was dropped as empty, and nobody answered.
    """
    quoted = []
    for item in (event.get("attachments") or [])[:MAX_SHARED] if isinstance(event.get("attachments"), list) else []:
        if not isinstance(item, dict) or not item.get("is_share"):
            continue
        body = item.get("text") or item.get("fallback")
        if not isinstance(body, str) or not body.strip():
            continue
        author = item.get("author_name")
        quoted.append(forwarded_text(body[:MAX_SHARED_CHARS].strip(), author[:80] if isinstance(author, str) else ""))
    return "\n\n".join(quoted)
