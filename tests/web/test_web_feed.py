"""A chat's feed: whole-state events, a bounded backlog, resuming after ``Last-Event-ID``."""

from __future__ import annotations

from hermes_gateway._core.web.feed import FEED_BACKLOG, ChatFeed


def test_a_long_reply_costs_the_backlog_one_entry_and_a_reconnect_resumes_after_its_last_event():
    feed = ChatFeed()
    feed.publish({"type": "busy"})
    for n in range(1, 1000):
        feed.publish({"type": "text", "id": "m1", "text": "x" * n, "final": False})
    feed.publish({"type": "text", "id": "m1", "text": "x" * 1000, "final": True})
    feed.publish({"type": "idle"})
    assert [e.data for e in feed.events] == ['{"type": "busy"}', '{"type": "text", "id": "m1", "text": "'
                                            + "x" * 1000 + '", "final": true}', '{"type": "idle"}']
    assert [e.id for e in feed.after(1)] == [1001, 1002]  # Last-Event-ID: 1 -> the final text and idle


def test_the_backlog_is_bounded_and_a_reader_far_behind_gets_what_is_left():
    feed = ChatFeed()
    for n in range(FEED_BACKLOG + 50):
        feed.publish({"type": "text", "id": f"m{n}", "text": str(n), "final": True})
    assert len(feed.events) == FEED_BACKLOG
    assert [e.id for e in feed.after(0)][0] == 51 and feed.after(feed.next_id - 1) == []
