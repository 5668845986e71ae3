"""Styled text lines and column layout, shared by the tree and table renderers.

A line is a list of segments `(text, style)`; `style` is a semantic name (`"ok"`, `"bad"`, `"muted"`, ...) or "".
Layout works on the plain text, so output is identical with and without colour; colour is added only when writing
to a terminal, through rich (imported then, and only then).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import zip_longest
from typing import IO

from workload_map.cli.safe import LINE_LIMIT, safe_text

Segment = tuple[str, str]
Line = list[Segment]
Cell = Line

# Semantic style -> rich style.
STYLES: dict[str, str] = {
    "title": "bold",
    "heading": "bold",
    "muted": "dim",
    "glyph": "dim",
    "ok": "green",
    "warn": "yellow",
    "bad": "bold red",
    "total": "bold",
    "accent": "cyan",
}

PHASE_STYLES: dict[str, str] = {
    "Running": "ok",
    "Completed": "ok",
    "Succeeded": "ok",
    "Failed": "bad",
    "Degraded": "warn",
    "Suspending": "warn",
    "Suspended": "warn",
    "Resuming": "warn",
    "Initializing": "warn",
    "Pending": "warn",
    "Unknown": "warn",
    "Undefined": "muted",
}


def plain(line: Iterable[Segment]) -> str:
    return "".join(text for text, _ in line)


def seg(text: str, style: str = "") -> Line:
    return [(text, style)] if text else []


def align(rows: Sequence[Sequence[Cell]], padding: int = 3, min_width: int = 0) -> list[Line]:
    """Lay `rows` out in columns, like kubectl's tab writer: each column as wide as its widest cell plus `padding`
    (at least `min_width`), the last cell unpadded, trailing spaces trimmed."""
    if not rows:
        return []
    columns = max(len(row) for row in rows)
    widths = [0] * columns
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], shown_width(cell))
    out: list[Line] = []
    for row in rows:
        # The last non-empty cell ends the line (no padding after it).
        last = max((i for i, cell in enumerate(row) if plain(cell)), default=-1)
        line: Line = []
        for index, cell in enumerate(row[: last + 1]):
            line.extend(cell)
            if index < last:
                width = max(widths[index] + padding, min_width)
                line.append((" " * (width - shown_width(cell)), ""))
        out.append(line)
    return out


def shown_text(cell: Cell) -> str:
    """`cell`'s text as `write_lines` prints it: a control character in untrusted text escaped (`\\x1b`)."""
    text = plain(cell)
    return text if text.isprintable() else safe_text(text, None)


def shown_width(cell: Cell) -> int:
    """How many characters `cell` takes once printed (`shown_text`), so the columns after it stay aligned."""
    return len(shown_text(cell))


def align_with_notes(
    rows: Sequence[Sequence[Cell]],
    notes: Mapping[int, Cell],
    padding: int = 3,
    min_width: int = 0,
    line_width: int | None = None,
) -> list[Line]:
    """`align`, with the rows whose index is in `notes` (their cells after the first empty) carrying that message
    after the first column instead of in the columns: a long message (a cluster that could not be read) spans the
    line and never widens the other rows' columns. With `line_width` (a terminal's), a note is cut with `...` to
    fit it (the caller says the whole message elsewhere: a warning on stderr)."""
    lines = align(rows, padding=padding, min_width=min_width)
    if not notes:
        return lines
    width = max(max((shown_width(row[0]) for row in rows if row), default=0) + padding, min_width)
    for index, note in notes.items():
        first = list(rows[index][0]) if rows[index] else []
        text = shown_text(note)
        room = None if line_width is None else max(line_width - width, 8)
        shown = note if room is None or len(text) <= room else [(text[: room - 3] + "...", note[0][1] if note else "")]
        lines[index] = [*first, (" " * (width - shown_width(first)), ""), *shown]
    return lines


def safe_line(line: Line, limit: int = LINE_LIMIT) -> Line:
    """`line` as a terminal may show it: each segment's control characters escaped (a newline inside a field too),
    and the line cut after `limit` characters of its text with the count of the rest (`cli.safe`)."""
    out: Line = []
    used = 0
    for index, (text, style) in enumerate(line):
        if used + len(text) > limit:
            rest = len(text) - (limit - used) + sum(len(part) for part, _ in line[index + 1 :])
            out.append((safe_text(text[: limit - used], None), style))
            out.append((f"... ({rest:,} more characters)", "muted"))
            return out
        used += len(text)
        out.append((safe_text(text, None), style))
    return out


def write_table(
    rows: Sequence[Sequence[Cell]], stream: IO[str], *, color: bool, padding: int = 3, min_width: int = 0
) -> None:
    """`write_lines(align(rows, padding, min_width), stream, color=color)`, character for character. Without
    colour (a pipe, a file: `wmap get` of thousands of rows) each cell's text is made once and each line joined
    from it, instead of a segment list per line taken apart again by `safe_line` (~100,000 instructions a row of
    `get`'s table, issue 19); a line past `LINE_LIMIT` is cut by `safe_line` itself."""
    if color or not rows:
        write_lines(align(rows, padding=padding, min_width=min_width), stream, color=color)
        return
    texts = [[cell[0][0] if len(cell) == 1 else plain(cell) for cell in row] for row in rows]
    shown = [[text if text.isprintable() else safe_text(text, None) for text in row] for row in texts]
    spans = [max(max(map(len, column)) + padding, min_width) for column in zip_longest(*shown, fillvalue="")]
    out: list[str] = []
    for number, row_texts in enumerate(texts):
        last = len(row_texts) - 1  # the last non-empty cell ends the line (no padding after it), as in `align`
        while last >= 0 and not row_texts[last]:
            last -= 1
        row_shown = shown[number]
        parts: list[str] = []
        used = 0  # the line's length before escapes: what `safe_line`'s limit counts
        for index in range(last):
            text = row_shown[index]
            pad = spans[index] - len(text)
            parts += (text, " " * pad)
            used += len(row_texts[index]) + pad
        if last >= 0:
            parts.append(row_shown[last])
            used += len(row_texts[last])
        if used > LINE_LIMIT:
            line: Line = []
            for index, cell in enumerate(rows[number][: last + 1]):
                line.extend(cell)
                if index < last:
                    line.append((" " * (spans[index] - len(row_shown[index])), ""))
            out.append(plain(safe_line(line)).rstrip() + "\n")
        else:
            out.append("".join(parts).rstrip() + "\n")
    stream.write("".join(out))


def write_lines(lines: Iterable[Line], stream: IO[str], *, color: bool) -> None:
    """Write lines, in colour (through rich) only when asked; every line made terminal-safe (`safe_line`)."""
    if not color:
        stream.write("".join(plain(safe_line(line)).rstrip() + "\n" for line in lines))
        return
    # rich costs ~16 ms to import: only a terminal in colour pays for it (JSON, YAML and piped text never do).
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True, emoji=False, markup=False)
    for line in lines:
        text = Text()
        for part, style in safe_line(line):
            text.append(part, style=STYLES.get(style, style) or None)
        text.rstrip()
        console.print(text)
