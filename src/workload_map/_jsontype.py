"""The name of a JSON value's type, as jq spells it in its messages: one helper for every layer.

Below every layer but `workload_map.errors` (the import-linter layers contract in `pyproject.toml`); imports nothing
of the library.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_type", "json_type_phrase"]


def json_type(value: Any) -> str:
    """`null`, `boolean`, `number`, `string`, `array` or `object` (anything else, e.g. a mapping, is an object)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def json_type_phrase(value: Any) -> str:
    """The type name with its article: `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`."""
    name = json_type(value)
    if name == "null":
        return name
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"
