"""Issue 20's human quantities outside the tree (`resources.human_amount`: capacity tables, placement reasons) and
the multi-cluster tables' warning rows (`align_with_notes`: a cluster that could not be read is one line that never
widens the other rows' columns), and columns measured as the terminal shows them (escaped)."""

from __future__ import annotations

import io
from fractions import Fraction

import pytest

from workload_map.cli.render.text import align, align_with_notes, plain, seg, write_lines
from workload_map.resources import human_amount, parse_quantity


@pytest.mark.parametrize(
    ("name", "quantity", "text"),
    [
        ("cpu", "47100m", "47.1"),
        ("cpu", "208", "208"),
        ("cpu", "0", "0"),
        ("memory", "2064Gi", "2.02Ti"),
        ("memory", "8G", "7.45Gi"),
        ("memory", "64Gi", "64Gi"),
        ("ephemeral-storage", "900G", "838Gi"),
        ("hugepages-2Mi", "1Gi", "1Gi"),
        ("nvidia.com/gpu", "16", "16"),
        ("pods", "110", "110"),
    ],
)
def test_amounts_read_as_a_person_reads_them(name: str, quantity: str, text: str) -> None:
    assert human_amount(name, parse_quantity(quantity)) == text


def test_a_fraction_of_a_core_is_never_shown_as_nothing() -> None:
    assert human_amount("cpu", Fraction(1, 10**6)) == "<0.001"


def lines(rows: list[list[str]], notes: dict[int, str]) -> list[str]:
    table = [[seg(cell) for cell in row] for row in rows]
    return [plain(line) for line in align_with_notes(table, {i: seg(text) for i, text in notes.items()})]


def test_a_note_row_spans_the_line_after_the_first_column() -> None:
    rows = [["CLUSTER", "NAME", "AGE"], ["a", "web", "5s"], ["gone", "", ""], ["b", "api", "1m"]]
    out = lines(rows, {2: "(not read: cannot reach https://127.0.0.1:9: connection refused)"})
    assert out == [
        "CLUSTER   NAME   AGE",
        "a         web    5s",
        "gone      (not read: cannot reach https://127.0.0.1:9: connection refused)",
        "b         api    1m",
    ]


def test_on_a_terminal_a_note_is_cut_to_the_width() -> None:
    rows = [["CLUSTER", "NAME"], ["a", "web"], ["gone", ""]]
    table = [[seg(cell) for cell in row] for row in rows]
    note = {2: seg("(not read: cannot reach https://127.0.0.1:9: connection refused)", "warn")}
    out = [plain(line) for line in align_with_notes(table, note, line_width=40)]
    assert out[2] == "gone      (not read: cannot reach htt..."
    assert len(out[2]) == 40
    assert align_with_notes(table, note, line_width=40)[2][-1][1] == "warn"  # still in the warning's colour


def test_without_notes_it_is_align() -> None:
    rows = [["A", "B"], ["long cell", "x"]]
    table = [[seg(cell) for cell in row] for row in rows]
    assert [plain(line) for line in align_with_notes(table, {})] == [plain(line) for line in align(table)]


def test_columns_after_an_escaped_cell_stay_aligned() -> None:
    """A control character in untrusted text is printed escaped (`\\x1b`: four characters): the column is as
    wide as what the terminal shows, so the next column starts where the header's does."""
    rows = [["NAME", "ORIGIN"], ["w\x1b[2J", "catalog"], ["plain", "catalog"]]
    table = [[seg(cell) for cell in row] for row in rows]
    buffer = io.StringIO()
    write_lines(align(table), buffer, color=False)
    lines = buffer.getvalue().splitlines()
    assert lines[1] == "w\\x1b[2J   catalog"
    assert {line.index("catalog") if "catalog" in line else line.index("ORIGIN") for line in lines} == {11}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_table_fitted_to_a_terminal_counts_escaped_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal `get` fits its table to the width: measured as printed, so a name whose control characters
    are escaped (each `\\x1b` four characters) is cut to fit, not let past the edge."""
    from workload_map.cli.commands.get import fit_terminal

    monkeypatch.setattr("sys.stdout", _Terminal())
    monkeypatch.setenv("COLUMNS", "60")
    headers = ["NAME", "PHASE"]
    evil = "w" + "\x1b" * 12 + "-x"  # 15 characters, 51 once escaped: with PHASE, 61 columns
    table = [[seg(text) for text in headers], [seg(evil), seg("Running")]]
    fitted, _ = fit_terminal(table, headers)
    buffer = io.StringIO()
    write_lines(align(fitted), buffer, color=False)
    lines = buffer.getvalue().splitlines()
    assert lines[1].startswith("w\\x1b") and lines[1].endswith("...   Running")
    assert max(len(line) for line in lines) <= 60
