"""The root of every error the library raises: `except WorkloadMapError` catches them all.

This module is the lowest layer (the import-linter layers contract in `pyproject.toml`): every layer may import it
and it imports none of them. Each layer's errors subclass `WorkloadMapError`, keeping the builtin they have always
been (`ValueError`, `KeyError`, ...) as a second base, so existing `except ValueError` clauses still catch them.
The hierarchy is listed in `docs/architecture.md`, "Errors".
"""

from __future__ import annotations

__all__ = ["WorkloadMapError"]


class WorkloadMapError(Exception):
    """Base of every error raised by `workload_map` (model, jq, validation, resolve, pods, gang, ..., cli)."""
