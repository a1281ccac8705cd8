"""Markdown tables laid out for a chat screen (``hermes_gateway._core.tables``): what a person reads."""

from __future__ import annotations

from hermes_gateway import render_table
from hermes_gateway._core.tables import (display_width, find_tables, has_table, layout_table, plain_cell,
                                         rewrite_tables, split_row)

FIVE = """Intro line.

| Name | Language | Stars | License | Last release |
|------|:--------:|------:|---------|--------------|
| requests | Python | 51k | Apache-2.0 | 2024-05-29 |
| **httpx** | Python | 13k | BSD-3 | [2024](https://example.org) |

After the table."""


def test_a_table_is_found_with_its_cells_and_its_exact_place_in_the_text():
    [table] = find_tables(FIVE)
    assert FIVE[table.start:table.end].startswith("| Name |") and FIVE[table.start:table.end].endswith("example.org) |")
    assert table.header == ["Name", "Language", "Stars", "License", "Last release"]
    assert table.rows[1] == ["**httpx**", "Python", "13k", "BSD-3", "[2024](https://example.org)"]


def test_a_narrow_table_becomes_an_aligned_grid_in_a_code_block():
    out = rewrite_tables("| a | bb |\n|---|---|\n| ccc | d |", width=40)
    assert out == "```\na    bb\n───  ──\nccc  d\n```"


def test_a_table_wider_than_the_screen_becomes_one_key_value_block_per_row():
    out = rewrite_tables(FIVE, width=40)
    assert "|" not in out
    assert out.startswith("Intro line.\n\n**Name**: requests\n**Language**: Python\n")
    assert "**Last release**: 2024-05-29\n\n**Name**: **httpx**" in out, "rows are blocks apart, values keep markup"
    assert out.endswith("**Last release**: [2024](https://example.org)\n\nAfter the table.")


def test_the_same_table_fits_as_a_grid_on_a_wider_screen_with_markup_gone_from_its_cells():
    out = rewrite_tables(FIVE, width=80)
    grid = out.split("```\n")[1]
    assert grid.splitlines()[3] == "httpx      Python     13k  BSD-3       2024"
    assert "|" not in out and "**" not in out


def test_whatsapp_and_plain_styles_use_their_own_syntax():
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    assert rewrite_tables(table, style="whatsapp") == "```a  b\n─  ─\n1  2```"
    assert render_table(["key", "value"], [["x" * 30, "y" * 30]], style="whatsapp") == f"*key*: {'x' * 30}\n*value*: {'y' * 30}"
    assert render_table(["k", "l"], [["v", "w"]], width=3, style="plain") == "k: v\nl: w"


def test_tables_inside_code_fences_and_lookalikes_are_left_alone():
    fenced = "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```"
    assert find_tables(fenced) == [] and rewrite_tables(fenced) == fenced
    assert find_tables("Heading\n---\ntext") == [], "a setext heading is no table"
    assert find_tables("a | b | c\n---|---\n1 | 2 | 3") == [], "header and delimiter must have as many cells"
    assert not has_table("no pipes - at all") and has_table("a|b\n-|-")


def test_a_table_ends_at_a_blank_line_or_another_block_and_short_rows_are_padded():
    [table] = find_tables("x | y\n--|--\n1\n\n| not | table |")
    assert table.rows == [["1", ""]], "a row without a pipe is still a row (GFM)"
    [table] = find_tables("x | y\n--|--\n1 | 2\n> a quote")
    assert table.rows == [["1", "2"]]


def test_cells_split_at_pipes_but_not_escaped_ones_or_pipes_in_code():
    assert split_row("| a \\| b | `c | d` | e |") == ["a | b", "`c | d`", "e"]
    assert plain_cell("**bold** and `code` and [link](https://x.y) and *em*") == "bold and code and link and em"


def test_wide_characters_count_two_columns_so_the_grid_stays_aligned():
    assert display_width("語言") == 4 and display_width("é") == 1
    layout = layout_table(["名前", "n"], [["語言模型", "1"], ["ab", "22"]], width=40)
    assert layout.grid is not None
    last = ["n", "─" * 2, "1", "22"]
    assert [display_width(line) - display_width(cell) for line, cell in zip(layout.grid, last)] == [10] * 4, \
        "the second column starts at the same screen column on every line"


def test_a_row_of_empty_cells_shows_nothing_and_a_header_without_rows_stays_visible():
    wide = ["column " + str(i) for i in range(8)]
    assert render_table(wide, [[""] * 8, ["a"] + [""] * 7]) == "**column 0**: a"
    assert render_table(wide, []).startswith("```\ncolumn 0  column 1")


def test_a_grid_column_follows_the_delimiters_alignment():
    out = rewrite_tables("| name | n | mid |\n|:--|--:|:-:|\n| a | 1 | x |\n| bbbb | 100 | yyy |", width=40)
    assert out == "```\nname    n  mid\n────  ───  ───\na       1   x\nbbbb  100  yyy\n```"
