from hermes_gateway._core.delivery.measure import longest_prefix_within, measure_for, utf8_length, utf16_length


def test_emoji_outside_the_bmp_counts_two_utf16_units():
    assert utf16_length("a😀b") == 4
    assert measure_for("chars")("a😀b") == 3


def test_longest_prefix_never_splits_a_character():
    text = "😀😀😀"
    assert longest_prefix_within(text, 3, utf16_length) == 1
    assert longest_prefix_within(text, 4, utf16_length) == 2
    assert longest_prefix_within("abc", 10, len) == 3


def test_bytes_count_utf8_and_the_longest_prefix_ends_on_a_whole_character():
    assert measure_for("bytes")("aé😀中") == 1 + 2 + 4 + 3 == utf8_length("aé😀中")
    assert longest_prefix_within("é😀", 5, utf8_length) == 1  # 2 + 4 > 5: the emoji is not cut in half
    assert longest_prefix_within("é😀", 6, utf8_length) == 2
    assert longest_prefix_within("中中", 5, utf8_length) == 1
