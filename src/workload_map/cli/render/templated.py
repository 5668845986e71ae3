"""The formats that carry a value, as kubectl's: `-o jsonpath=TEMPLATE`, `-o jsonpath-file=FILE`,
`-o custom-columns=NAME:EXPR,...` and `-o custom-columns-file=FILE`, over the JSON form of what `-o json` prints.

`parse_format` checks the value before anything is read from a cluster (a bad template is exit 2 at once); the
file forms read their file through the caller's `read_text` (the command's input reader, with its limits).
Printed values are terminal-safe (`cli.safe`): a template's own text (`{"\\n"}`, `{"\\t"}`) is written as it is,
the values from the data are escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, Final

import msgspec

from workload_map.cli.render.jsonpath_error import JSONPathError
from workload_map.cli.safe import safe_text

if TYPE_CHECKING:
    from workload_map.cli.render.columns import Column
    from workload_map.cli.render.jsonpath import Template

# The JSONPath engine and the custom columns (`render.jsonpath`, `render.columns`) are imported when a format is a
# template: `get` parses every `-o` here, and a plain table never needs them (issue 19: a dozen dataclasses).

__all__ = ["TEMPLATED", "JSONPathError", "TemplatedFormat", "parse_format"]

TEMPLATED: Final = ("jsonpath", "jsonpath-file", "custom-columns", "custom-columns-file")


class TemplatedFormat(msgspec.Struct, frozen=True):
    """A parsed `-o NAME=VALUE`: a JSONPath template, or the columns of a custom-columns table."""

    name: str
    template: Template | None = None
    columns: tuple[Column, ...] = ()

    @property
    def is_columns(self) -> bool:
        return bool(self.columns)

    def write(self, document: Any, stream: IO[str]) -> None:
        """The template's text over `document` (jsonpath), with every value escaped for a terminal."""
        assert self.template is not None
        stream.write(self.template.render(document, escape=lambda text: safe_text(text, None)))

    def cells(self, items: Sequence[Any]) -> list[list[str]]:
        """The custom-columns table: the headers, then one row per item (cells not yet escaped: the line
        writer escapes them)."""
        from workload_map.cli.render.columns import column_cells

        return [[column.header for column in self.columns], *(column_cells(item, self.columns) for item in items)]


def parse_format(fmt: str, read_text: Callable[[str], str]) -> TemplatedFormat | None:
    """The templated format `fmt` names, parsed; None for a plain format (`table`, `json`, ...).
    `JSONPathError` (one line) for a template or column list that does not parse or an empty value."""
    name, equals, value = fmt.partition("=")
    if not equals or name not in TEMPLATED:
        return None
    if not value:
        example = "'{.items[*].name}'" if name == "jsonpath" else "NAME:.name,PHASE:.phase"
        what = "a file" if name.endswith("-file") else f"a value, e.g. -o {name}={example}"
        raise JSONPathError(f"-o {name}= needs {what}")
    from workload_map.cli.render.columns import parse_columns, parse_columns_file

    if name == "jsonpath":
        return TemplatedFormat(name, template=_template(value, "-o jsonpath"))
    if name == "jsonpath-file":
        return TemplatedFormat(name, template=_template(read_text(value), value))
    if name == "custom-columns":
        return TemplatedFormat(name, columns=tuple(parse_columns(value)))
    return TemplatedFormat(name, columns=tuple(parse_columns_file(read_text(value), value)))


def _template(text: str, where: str) -> Template:
    from workload_map.cli.render.jsonpath import compile_template

    try:
        return compile_template(text)
    except JSONPathError as exc:
        raise JSONPathError(f"{where}: {exc}") from None
