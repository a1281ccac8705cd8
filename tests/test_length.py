"""The length units platforms count (the public ``hermes_gateway.utf16_length`` / ``utf8_length``)."""

from __future__ import annotations

import pytest

import hermes_gateway
from hermes_gateway import Platform, utf8_length, utf16_length
from hermes_gateway._core.length import utf8_width


@pytest.mark.parametrize("text", ["", "plain", "é", "中文", "😀", "a\u0301", "Grüße 😀 中"])
def test_utf8_length_is_the_encoded_size(text):
    assert utf8_length(text) == len(text.encode("utf-8"))
    assert sum(utf8_width(ch) for ch in text) == utf8_length(text)


def test_a_lone_surrogate_is_counted_not_refused():
    assert utf8_length("a\ud800") == 4 and utf16_length("a\ud800") == 2


def test_a_platform_may_count_bytes_and_nothing_else_new():
    assert Platform(name="matrixish", length_unit="bytes", max_message_length=65_536).length_unit == "bytes"
    with pytest.raises(ValueError, match="length_unit must be 'chars', 'utf16' or 'bytes'"):
        Platform(name="x", length_unit="words")  # type: ignore[arg-type]
    assert "utf8_length" in hermes_gateway.__all__ and hermes_gateway.utf8_length.__doc__
