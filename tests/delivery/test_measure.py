from hermes_gateway._core.delivery.measure import longest_prefix_within, measure_for, utf16_length


def test_emoji_outside_the_bmp_counts_two_utf16_units():
    assert utf16_length("a😀b") == 4
    assert measure_for("chars")("a😀b") == 3


def test_longest_prefix_never_splits_a_character():
    text = "😀😀😀"
    assert longest_prefix_within(text, 3, utf16_length) == 1
    assert longest_prefix_within(text, 4, utf16_length) == 2
    assert longest_prefix_within("abc", 10, len) == 3
