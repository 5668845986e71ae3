"""`render.text.write_table`: the table `wmap get` prints, written without colour in one pass; it must be
`write_lines(align(...))` character for character (escapes, the columns after an escaped cell, the last cell
unpadded, trailing spaces trimmed, a line past LINE_LIMIT cut with the count of the rest)."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.cli.render.text import Cell, align, seg, write_lines, write_table
from workload_map.cli.safe import LINE_LIMIT

# printable text, spaces, controls (C0, DEL, C1), line separators, bidi overrides, a BOM, lone surrogates, wide text
_TEXT = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            "Z",
            "-",
            " ",
            "\t",
            "\n",
            "\x1b",
            "\x7f",
            "\x85",
            "\xa0",
            "\u2028",
            "\u202e",
            "\ufeff",
            "\ud800",
            "\u00e9",
            "\u4e2d",
            "(",
        ]
    ),
    max_size=12,
)
_CELL = st.lists(st.tuples(_TEXT, st.sampled_from(["", "ok", "heading"])), max_size=3)
_TABLE = st.lists(st.lists(_CELL, max_size=6), max_size=8)


def _expected(rows: list[list[Cell]], padding: int, min_width: int) -> str:
    out = io.StringIO()
    write_lines(align(rows, padding=padding, min_width=min_width), out, color=False)
    return out.getvalue()


def _written(rows: list[list[Cell]], padding: int, min_width: int) -> str:
    out = io.StringIO()
    write_table(rows, out, color=False, padding=padding, min_width=min_width)
    return out.getvalue()


@settings(max_examples=400, deadline=None)
@given(_TABLE, st.integers(0, 4), st.integers(0, 12))
def test_write_table_is_write_lines_of_align(rows: list[list[Cell]], padding: int, min_width: int) -> None:
    assert _written(rows, padding, min_width) == _expected(rows, padding, min_width)


def test_a_line_past_the_limit_is_cut_as_write_lines_cuts_it() -> None:
    for long in (LINE_LIMIT - 10, LINE_LIMIT - 4, LINE_LIMIT, LINE_LIMIT + 1, 3 * LINE_LIMIT):
        rows: list[list[Cell]] = [
            [seg("NAME", "heading"), seg("PHASE", "heading")],
            [seg("x" * long), seg("Running", "ok")],
            [seg("short"), seg("\x1b[2J" + "y" * long)],
            [seg("a\nb" * (long // 3)), seg(""), seg("z")],
        ]
        written = _written(rows, 3, 6)
        assert written == _expected(rows, 3, 6)
        if long > LINE_LIMIT:
            assert "more characters)" in written
        assert "\x1b" not in written  # escaped where it is shown, or cut away with the rest of its line


def test_an_empty_table_writes_nothing() -> None:
    assert _written([], 3, 6) == "" == _expected([], 3, 6)
    assert _written([[], []], 3, 6) == "\n\n" == _expected([[], []], 3, 6)
