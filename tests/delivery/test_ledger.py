"""The final plan: which message shows which text, so the reply is seen exactly once."""

from hermes_gateway import MessageRef
from hermes_gateway._core.delivery.ledger import EMPTY_REPLY, Ledger, LedgerEntry
from hermes_gateway._core.delivery.split import Piece, render

REF1, REF2 = MessageRef("c", "1"), MessageRef("c", "2")


def test_frozen_messages_keep_their_text_when_the_reply_still_starts_with_it():
    doc = "First part. Second part that was still growing."
    first = LedgerEntry(Piece(0, 12, None), frozen=True, ref=REF1, shown="First part. ", text="First part. ")
    live = LedgerEntry(Piece(12, 30, None), ref=REF2, shown="Second part that w ▌")
    plan = Ledger([first, live]).plan_final(doc, doc, 40, len)
    assert [(e.ref, t) for e, t in plan] == [(REF1, "First part. "), (REF2, "Second part that was still growing.")]
    assert not plan[0][0].needs(plan[0][1]), "an unchanged message costs no call"


def test_a_new_reply_is_resplit_over_every_message_already_shown():
    shown = "Old text, one. Old text, two."
    first = LedgerEntry(Piece(0, 15, None), frozen=True, ref=REF1, shown="Old text, one. ", text="Old text, one. ")
    live = LedgerEntry(Piece(15, 29, None), ref=REF2, shown="Old text, two. ▌")
    plan = Ledger([first, live]).plan_final("New reply.", shown, 40, len, reset=True)
    assert [e.ref for e, _ in plan] == [REF1, REF2]
    assert "".join(t for _, t in plan) == "New reply."


def test_an_empty_reply_still_clears_the_cursor():
    live = LedgerEntry(Piece(0, 5, None), ref=REF1, shown="Hmm… ▌")
    plan = Ledger([live]).plan_final("", "Hmm…", 40, len)
    assert [(e.ref, t) for e, t in plan] == [(REF1, EMPTY_REPLY)]


def test_an_interrupted_reply_only_finishes_messages_that_exist():
    doc = "x" * 30 + " " + "y" * 30
    live = LedgerEntry(Piece(0, 20, None), ref=REF1, shown="x" * 20 + " ▌")
    plan = Ledger([live]).plan_final(doc, doc, 40, len, interrupted=True)
    assert [(e.ref, t) for e, t in plan] == [(REF1, render(doc, Piece(0, 31, None)))]
