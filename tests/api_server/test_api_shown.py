"""The words a 400 uses for the value it refuses: JSON's names and spellings, and never a whole payload."""

from __future__ import annotations

from hermes_gateway._core.api_server.shown import kind_of, shown


def test_kinds_are_named_as_json_names_them():
    assert [kind_of(v) for v in ({}, [], "x", True, 3, 2.5, None)] == [
        "an object", "an array", "a string", "a boolean", "a number", "a number", "null"]


def test_scalars_are_shown_as_the_client_wrote_them_and_long_ones_cut():
    assert [shown(v) for v in (True, None, 7, 0.5, "auto")] == ["true", "null", "7", "0.5", "'auto'"]
    assert shown({"a": 1}) == "an object" and shown([1, 2]) == "an array"
    long = shown("x" * 100)
    assert len(long) == 40 and long.endswith("...") and long.startswith("'xxx")
