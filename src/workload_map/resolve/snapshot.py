"""One state of a workload's document: the object, its jq `Document`, and the outputs evaluated on it.

A snapshot never changes: a write makes a new one (copy-on-write along the written paths, see `session.py`), so a
`Resolution` taken before a write keeps describing the object it was taken from. Outputs are evaluated on first
use, every expression of the definition in one `evaluate_many` call (one conversion of the object).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from workload_map.jq import Document, EvaluationPolicy, JqError
from workload_map.resolve.errors import ExtractionError


class Snapshot:
    """The object at one moment and everything evaluated on it (never mutated once built)."""

    __slots__ = ("_document", "_lock", "_plan", "_results", "obj", "policy")

    def __init__(self, obj: dict[str, Any], plan: Sequence[str], policy: EvaluationPolicy) -> None:
        self.obj = obj
        self.policy = policy  # where the definition's expressions run, on this object and its pods
        self._plan = plan
        self._document = Document(obj, policy=policy)
        self._results: dict[str, list[Any] | JqError] = {}
        # evaluation fills the cache once; a lock keeps two threads reading one resolution from converting twice
        self._lock = threading.Lock()

    def prefetch(self, expressions: Sequence[str] = ()) -> None:
        """Evaluate, in one call, every expression of the plan (and `expressions`) not yet cached."""
        with self._lock:
            wanted = [expr for expr in dict.fromkeys([*expressions, *self._plan]) if expr and expr not in self._results]
            if not wanted:
                return
            results = self._document.evaluate_many(wanted)
            self._results.update(zip(wanted, results, strict=True))

    def outputs(self, expr: str, component: str, field: str) -> list[Any]:
        """The outputs of `expr`; a jq failure is an `ExtractionError` at `field`. The list is the cache's own:
        callers copy what they hand out."""
        result = self._results.get(expr)
        if result is None:
            self.prefetch([expr])
            result = self._results[expr]
        if isinstance(result, JqError):
            raise ExtractionError(component, field, f"{result.kind}: {result.message}") from result
        return result

    def paths(self, expr: str) -> list[list[Any]]:
        """The paths `expr` selects (for write-back); raises `JqError`."""
        found: list[list[Any]] = self._document.paths(expr)
        return found


__all__ = ["Snapshot"]
