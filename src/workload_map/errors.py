"""The root of every error the library raises: `except WorkloadMapError` catches them all.

This module is the lowest layer (the import-linter layers contract in `pyproject.toml`): every layer may import it
and it imports none of them. Each layer's errors subclass `WorkloadMapError`, keeping the builtin they have always
been (`ValueError`, `KeyError`, ...) as a second base, so existing `except ValueError` clauses still catch them.
The hierarchy is listed in `docs/architecture.md`, "Errors".
"""

from __future__ import annotations

__all__ = ["ArgumentTypeError", "ArgumentValueError", "WorkloadMapError"]


class WorkloadMapError(Exception):
    """Base of every error raised by `workload_map` (model, jq, validation, resolve, pods, gang, ..., cli)."""


class ArgumentTypeError(WorkloadMapError, TypeError):
    """An argument of the wrong type for a public function (`validate(None)`, `load_definitions(5)`, a pod that is
    not a mapping): a programming error, so also a `TypeError`, as Python's own are; a `WorkloadMapError`, so
    `except WorkloadMapError` still catches everything the library raises (docs/architecture.md, "Errors")."""

    def __init__(self, what: str, expected: str, value: object) -> None:
        self.what = what
        self.expected = expected
        super().__init__(f"{what} must be {expected}, not {_type_name(value)}")


class ArgumentValueError(WorkloadMapError, ValueError):
    """An argument of the right type with a value a public function does not take (an unknown origin or jq mode,
    a deadline that is not positive): a programming error, so also a `ValueError`, as Python's own are."""


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__
