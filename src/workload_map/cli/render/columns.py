"""kubectl's `-o custom-columns=NAME:EXPR,...` and `-o custom-columns-file=FILE`, and fitting a table into a
terminal's width.

A column's expression is kubectl's relaxed JSONPath: `.metadata.name`, `{.metadata.name}` or `metadata.name`,
evaluated over each item's JSON form (`render.jsonpath`). Several results of one column are joined by `,`; no
result reads `<none>`, as kubectl prints them.

A table wider than the terminal (only on a terminal: piped output is never cut) first loses the columns its
command ranks lowest, then has its widest cells cut with `...` (`fit_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.cli.render.jsonpath import JSONPathError, Template, compile_template, to_text

__all__ = ["Column", "column_cells", "fit_table", "parse_columns", "parse_columns_file"]

NONE = "<none>"
MIN_CELL = 8  # a cut cell keeps at least this many characters


@dataclass(frozen=True)
class Column:
    header: str
    expression: str
    template: Template


def _relaxed(expression: str) -> str:
    """kubectl's RelaxedJSONPathExpression: `{.a}`, `.a` and `a` all mean `{.a}`."""
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        return text
    if not text.startswith((".", "$", "@", "[")):
        text = "." + text
    return "{" + text + "}"


def _column(header: str, expression: str, where: str) -> Column:
    if not header.strip():
        raise JSONPathError(f"{where}: a column needs a header: NAME:EXPRESSION")
    if not expression.strip():
        raise JSONPathError(f"{where}: column {header!r} needs an expression: {header}:.metadata.name")
    try:
        template = compile_template(_relaxed(expression))
    except JSONPathError as exc:
        raise JSONPathError(f"{where}: column {header!r}: {exc}") from None
    return Column(header.strip(), expression.strip(), template)


def _split_commas(spec: str) -> list[str]:
    """`spec` split at the commas outside brackets and quotes (a union or filter keeps its own)."""
    parts: list[str] = []
    depth, quote, begin = 0, "", 0
    for index, char in enumerate(spec):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(spec[begin:index])
            begin = index + 1
    parts.append(spec[begin:])
    return parts


def parse_columns(spec: str) -> list[Column]:
    """`NAME:.path,PHASE:.phase` as kubectl's `-o custom-columns=`; `JSONPathError` naming the bad column."""
    if not spec.strip():
        raise JSONPathError("custom-columns: no columns given: custom-columns=NAME:.name,PHASE:.phase")
    columns = []
    for index, part in enumerate(_split_commas(spec), 1):
        header, colon, expression = part.partition(":")
        if not colon:
            raise JSONPathError(f"custom-columns: column {index} is {part!r}, expected NAME:EXPRESSION")
        columns.append(_column(header, expression, "custom-columns"))
    return columns


def parse_columns_file(text: str, label: str) -> list[Column]:
    """A custom-columns file as kubectl reads it: the headers on the first line, the expressions on the second,
    each separated by white space."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != 2:
        raise JSONPathError(
            f"{label}: a custom-columns file has two lines, the headers and then their expressions "
            f"(it has {len(lines)})"
        )
    headers, expressions = lines[0].split(), lines[1].split()
    if len(headers) != len(expressions):
        raise JSONPathError(f"{label}: {len(headers)} headers but {len(expressions)} expressions")
    return [_column(header, expression, label) for header, expression in zip(headers, expressions, strict=True)]


def column_cells(item: Any, columns: Sequence[Column]) -> list[str]:
    """One row of cells: each column's results joined by `,`, `<none>` when it has none."""
    cells = []
    for column in columns:
        values = [value for value in column.template.results(item) if value is not None]
        cells.append(",".join(to_text(value) for value in values) if values else NONE)
    return cells


def _width(rows: Sequence[Sequence[str]], keep: Sequence[int], padding: int) -> int:
    widths = [max(len(row[index]) for row in rows) for index in keep]
    return sum(widths) + padding * (len(widths) - 1)


def fit_table(
    rows: Sequence[Sequence[str]], width: int, drop_order: Sequence[int], padding: int = 3
) -> tuple[list[list[str]], list[int]]:
    """`rows` (the header first) made to fit in `width` columns: the columns in `drop_order` (indexes, the first
    dropped first) left out one by one while the table is too wide, then the widest column's cells cut with
    `...` (never below `MIN_CELL` characters). Returns the rows and the dropped indexes, in drop order."""
    if not rows:
        return [], []
    count = len(rows[0])
    keep = list(range(count))
    dropped: list[int] = []
    for index in drop_order:
        if _width(rows, keep, padding) <= width or len(keep) <= 1:
            break
        if index in keep:
            keep.remove(index)
            dropped.append(index)
    out = [[row[index] for index in keep] for row in rows]
    while True:
        widths = [max(len(row[i]) for row in out) for i in range(len(keep))]
        total = sum(widths) + padding * (len(widths) - 1)
        widest = max(range(len(widths)), key=lambda i: widths[i])
        if total <= width or widths[widest] <= MIN_CELL:
            return out, dropped
        limit = max(MIN_CELL, widths[widest] - (total - width))
        for row in out:
            if len(row[widest]) > limit:
                row[widest] = row[widest][: limit - 3] + "..."
