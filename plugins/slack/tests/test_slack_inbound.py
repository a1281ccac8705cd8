"""Which Slack events become a message for the core, and with what chat, thread and mention."""

from __future__ import annotations

from hermes_slack.download import Downloads
from hermes_slack.emulator import BOT_TOKEN
from hermes_slack.inbound import EventReader


def reader():
    r = EventReader(Downloads(BOT_TOKEN, "https://slack.com/api/"))
    r.bot_user_id, r.bot_id, r.team_id = "U0BOT", "B0BOT", "T0HERMES"
    return r


def body(event_id="Ev1", **event):
    return {"event_id": event_id, "team_id": "T0HERMES", "type": "event_callback", "event": event}


def test_a_dm_is_a_direct_message_answered_in_its_own_thread():
    incoming = reader().to_incoming(body(type="message", channel="D1", user="U1", text="hi", ts="10.1",
                                         channel_type="im"))
    assert (incoming.chat_id, incoming.thread_id, incoming.message_id, incoming.update_id) == ("D1", "10.1", "10.1",
                                                                                                 "D1:10.1")
    assert incoming.is_direct and incoming.sender_id == "U1" and incoming.text == "hi"


def test_a_mention_is_stripped_and_marks_the_message_as_addressed():
    incoming = reader().to_incoming(body(type="app_mention", channel="C1", user="U1", text="<@U0BOT> echo: hi",
                                         ts="10.2", thread_ts="10.0"))
    assert incoming.text == "echo: hi" and incoming.mentioned and incoming.thread_id == "10.0"
    assert incoming.chat_kind == "channel" and not incoming.is_direct


def test_message_and_app_mention_for_one_message_give_one_incoming_but_a_redelivery_passes_for_the_core():
    r = reader()
    event = dict(channel="C1", user="U1", text="<@U0BOT> hi", ts="10.3")
    first = r.to_incoming(body("Ev1", type="message", channel_type="channel", **event))
    assert first is not None and first.mentioned
    assert r.to_incoming(body("Ev2", type="app_mention", **event)) is None
    again = r.to_incoming(body("Ev1", type="message", channel_type="channel", **event))
    assert again is not None and again.update_id == "C1:10.3", "the core dedupes the redelivery by update_id"
    fetched = reader().to_incoming(body("", type="message", channel_type="channel", **event))
    assert fetched is not None and fetched.update_id == again.update_id, "the catch-up's copy: the same id"


def test_a_thread_the_bot_replied_in_needs_no_mention():
    r = reader()
    plain = dict(type="message", channel="C1", user="U1", text="and then?", channel_type="channel")
    assert not r.to_incoming(body("Ev1", ts="11.1", thread_ts="11.0", **plain)).mentioned
    r.joined("C1", "11.0")
    assert r.to_incoming(body("Ev2", ts="11.2", thread_ts="11.0", **plain)).mentioned
    assert not r.to_incoming(body("Ev3", ts="11.3", **plain)).mentioned, "the channel itself still needs one"


def test_the_store_is_asked_about_a_thread_once_and_only_for_unmentioned_replies_in_channel_threads():
    r = reader()
    plain = dict(type="message", channel="C1", user="U1", text="and then?", channel_type="channel")
    follow_up = r.to_incoming(body("Ev1", ts="12.1", thread_ts="12.0", **plain))
    assert r.to_look_up(follow_up)
    assert not r.to_look_up(r.to_incoming(body("Ev2", ts="13.0", **plain))), "not in a thread"
    assert not r.to_look_up(r.to_incoming(body("Ev3", ts="14.1", thread_ts="14.0", channel="D1", user="U1",
                                               type="message", text="hi", channel_type="im"))), "a DM"
    assert not r.to_look_up(r.to_incoming(body("Ev4", ts="15.1", thread_ts="15.0", **dict(
        plain, text="<@U0BOT> you?")))), "mentioned"
    r.looked_up("C1", "12.0", replied=False)
    later = r.to_incoming(body("Ev5", ts="12.2", thread_ts="12.0", **plain))
    assert not later.mentioned and not r.to_look_up(later), "asked once per thread"
    r.joined("C1", "12.0")      # the bot replies there later (asked by a mention)
    assert r.to_incoming(body("Ev6", ts="12.3", thread_ts="12.0", **plain)).mentioned
    r.looked_up("C1", "16.0", replied=True)
    assert r.to_incoming(body("Ev7", ts="16.1", thread_ts="16.0", **plain)).mentioned


def test_another_bots_message_is_handed_on_marked_from_bot():
    """``bot_id`` (a modern app's post) and ``subtype: bot_message`` (a legacy integration's) become
    ``Incoming.from_bot``: the core's ``groups.bots`` decides what it gets (issue 38), not the plugin."""
    r = reader()
    app = r.to_incoming(body("Ev1", type="message", channel="C1", user="U9", bot_id="B9", text="build failed",
                             ts="2", bot_profile={"id": "B9", "name": "ci"}, channel_type="channel"))
    legacy = r.to_incoming(body("Ev2", type="message", channel="C1", subtype="bot_message", bot_id="B7",
                                username="deploy-bot", text="<@U0BOT> deployed", ts="3", channel_type="channel"))
    person = r.to_incoming(body("Ev3", type="message", channel="C1", user="U1", text="hi", ts="4",
                                channel_type="channel"))
    assert (app.from_bot, app.sender_id, app.sender_name, app.mentioned) == (True, "U9", "ci", False)
    assert (legacy.from_bot, legacy.sender_id, legacy.sender_name, legacy.mentioned) == (True, "B7", "deploy-bot",
                                                                                         True)
    assert person.from_bot is False
    unknown = EventReader(Downloads(BOT_TOKEN, "https://slack.com/api/"))  # before auth.test said who we are
    assert unknown.to_incoming(body("Ev4", type="message", channel="C1", user="U9", bot_id="B9", text="x",
                                    ts="5")) is None, "a bot's post that could be our own is never handed on"


def test_the_bots_own_posts_edits_and_joins_are_not_messages():
    r = reader()
    ignored = [
        dict(type="message", channel="D1", user="U0BOT", bot_id="B0BOT", text="my own echo", ts="1"),
        dict(type="message", channel="D1", subtype="bot_message", bot_id="B0BOT", text="own legacy post", ts="3"),
        dict(type="message", channel="D1", subtype="message_changed", message={"text": "edited"}, ts="4"),
        dict(type="message", channel="D1", subtype="message_deleted", ts="5"),
        dict(type="message", channel="C1", subtype="channel_join", user="U1", text="joined", ts="6"),
        dict(type="reaction_added", user="U1", reaction="wave"),
        dict(type="message", channel="D1", user="U0BOT", text="posted as the bot user", ts="7"),
    ]
    assert [r.to_incoming(body(f"Ev{i}", **e)) for i, e in enumerate(ignored)] == [None] * len(ignored)
    thread_reply = r.to_incoming(body("Ev99", type="message", subtype="thread_broadcast", channel="C1", user="U1",
                                      text="also in channel", ts="8", thread_ts="7.5", channel_type="channel"))
    assert thread_reply is not None and thread_reply.thread_id == "7.5"


def test_the_recipient_of_a_thread_is_the_person_who_wrote():
    r = reader()
    r.to_incoming(body(type="app_mention", channel="C1", user="U1", text="<@U0BOT> hi", ts="12.1", team="T0OTHER"))
    assert r.recipient("C1", "12.1") == ("U1", "T0OTHER")
    assert r.recipient("C1", "99.9") == (None, "T0HERMES")


def test_shared_files_become_attachments_with_the_words_as_their_caption():
    r = reader()
    photo = {"id": "F1", "name": "photo.png", "mimetype": "image/png", "size": 2048, "mode": "hosted",
             "url_private": "https://files.slack.com/files-pri/T0HERMES-F1/photo.png"}
    clip = {"id": "F2", "name": "audio_message.webm", "mimetype": "audio/webm", "size": 900, "mode": "hosted",
            "subtype": "slack_audio", "url_private": "https://files.slack.com/files-pri/T0HERMES-F2/audio_message.webm"}
    only_files = r.to_incoming(body("Ev1", type="message", subtype="file_share", channel="D1", user="U1", text="",
                                    ts="13.1", channel_type="im", files=[photo, clip]))
    assert only_files.text == "" and only_files.notice is None
    assert [(a.kind, a.mime, a.size, a.filename) for a in only_files.attachments] == \
        [("image", "image/png", 2048, "photo.png"), ("voice", "audio/webm", 900, "audio_message.webm")]
    captioned = r.to_incoming(body("Ev2", type="message", subtype="file_share", channel="D1", user="U1",
                                   text="echo: what is this?", ts="13.2", channel_type="im", files=[photo]))
    assert captioned.text == "echo: what is this?" and [a.filename for a in captioned.attachments] == ["photo.png"]


def test_files_with_nothing_to_download_are_left_out_and_alone_get_the_notice():
    r = reader()
    gone = [{"id": "F1", "mode": "tombstone"}, {"id": "F2", "name": "old.png", "mode": "hidden_by_limit"},
            {"id": "F3", "name": "Plan", "mode": "external", "url_private": "https://docs.google.com/document/d/x"},
            {"id": "F4", "mode": "file_access", "file_access": "check_file_info"}]
    alone = r.to_incoming(body("Ev1", type="message", subtype="file_share", channel="D1", user="U1", text="",
                               ts="14.1", channel_type="im", files=gone))
    assert alone.attachments == () and alone.text == "" and "can't open that file" in alone.notice
    with_words = r.to_incoming(body("Ev2", type="message", subtype="file_share", channel="D1", user="U1",
                                    text="see the plan", ts="14.2", channel_type="im", files=gone))
    assert with_words.attachments == () and with_words.notice is None and with_words.text == "see the plan"


def test_a_shared_message_reaches_the_core_quoted_with_its_author():
    """Slack carries a shared (forwarded) message as an ``is_share`` attachment and the person's words, often none,
    in ``text``: such a message came with empty text and was never answered. A link's unfurl is not a share."""
    share = {"is_share": True, "is_msg_unfurl": True, "author_name": "grace", "text": "Deploy at 5.\nNot before.",
             "fallback": "[December 4th] grace: Deploy at 5.", "channel_name": "ops", "ts": "9.9"}
    unfurl = {"title": "Example", "title_link": "https://example.org", "text": "a page"}
    alone = reader().to_incoming(body(type="message", channel="D1", user="U1", text="", ts="13.1", channel_type="im",
                                      attachments=[share, unfurl]))
    assert alone.text == "[forwarded message from grace]\n> Deploy at 5.\n> Not before."
    asked = reader().to_incoming(body(type="message", subtype="message_share", channel="D1", user="U1",
                                      text="is this right?", ts="13.2", channel_type="im", attachments=[share]))
    assert asked.text == "is this right?\n\n[forwarded message from grace]\n> Deploy at 5.\n> Not before."
