"""How a forward and a shared location read to the model, whichever platform they came from
(``hermes_gateway.forwarded_text``, ``hermes_gateway.location_text``; used by every plugin that receives them)."""

from __future__ import annotations

from hermes_gateway import forwarded_text, location_text


def test_a_forward_is_marked_with_its_sender_and_quoted_line_by_line():
    assert forwarded_text("Deploy at 5.\nNot before.", "Grace Hopper") == \
        "[forwarded message from Grace Hopper]\n> Deploy at 5.\n> Not before."
    assert forwarded_text("/start v2") == "[forwarded message]\n> /start v2"  # no sender known; no command either


def test_a_location_is_its_coordinates_and_the_name_the_platform_gives_it():
    assert location_text(52.520008, 13.404954) == "[a location: 52.520008, 13.404954]"
    assert location_text(52.52, 13.405, live=True) == "[a location (live): 52.520000, 13.405000]"
    assert location_text(48.8584, 2.2945, "Eiffel Tower, Champ de Mars") == \
        "[a place: Eiffel Tower, Champ de Mars (48.858400, 2.294500)]"
