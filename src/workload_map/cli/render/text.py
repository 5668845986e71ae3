"""Styled text lines and column layout, shared by the tree and table renderers.

A line is a list of segments `(text, style)`; `style` is a semantic name (`"ok"`, `"bad"`, `"muted"`, ...) or "".
Layout works on the plain text, so output is identical with and without colour; colour is added only when writing
to a terminal, through rich (imported then, and only then).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
