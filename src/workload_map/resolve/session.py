"""The one shared document of a workload: the object, its jq `Document`, cached outputs, and write-back.

Every component of a workload reads and writes through the same session, so an update through one component is
seen by every later read. jq outputs are cached per expression until the next write; the first read after a
write evaluates every expression of the definition in one `evaluate_many` call (one conversion of the object).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from workload_map.jq import Document, JqError
from workload_map.jq.writeback import PathError, set_paths
from workload_map.resolve._json import fast_copy, get_path, is_empty
from workload_map.resolve.errors import ExtractionError, UpdateError


class Session:
    """The object being resolved and everything evaluated on it."""

    def __init__(self, obj: dict[str, Any], plan: Iterable[str]) -> None:
        self.obj = obj
        self.original: dict[str, Any] | None = None  # a copy taken just before the first write
        self.writes = 0
        self._plan = list(dict.fromkeys(expr for expr in plan if expr))
        self._document = Document(obj)
        self._results: dict[str, list[Any] | JqError] = {}

    # --- reading -------------------------------------------------------------------------------------------

    def prefetch(self, expressions: Sequence[str] = ()) -> None:
        """Evaluate, in one call, every expression of the plan (and `expressions`) not yet cached."""
        wanted = [expr for expr in dict.fromkeys([*expressions, *self._plan]) if expr not in self._results]
        if not wanted:
            return
        results = self._document.evaluate_many(wanted)
        self._results.update(zip(wanted, results, strict=True))

    def outputs(self, expr: str, component: str, field: str) -> list[Any]:
        """The outputs of `expr` on the current document; a jq failure is an `ExtractionError` at `field`.

        The list is the cache's own: callers copy what they hand out.
        """
        result = self._results.get(expr)
        if result is None:
            self.prefetch([expr])
            result = self._results[expr]
        if isinstance(result, JqError):
            raise ExtractionError(component, field, f"{result.kind}: {result.message}") from result
        return result

    # --- writing -------------------------------------------------------------------------------------------

    def write(
        self,
        component: str,
        field: str,
        expr: str,
        values: Sequence[Any],
        *,
        zip_values: bool,
        keep_absent_empty: bool = True,
    ) -> None:
        """Set the paths `expr` selects: each to its own value (`zip_values`) or all to `values[0]`.

        With `keep_absent_empty`, an empty value (null, "", {}, []) is not written where the document holds
        nothing (or an empty value) at that path: an update never adds a null or empty field to an instance that
        did not have it. Every path is checked before the first is set, so a failed write changes nothing.
        """
        try:
            paths = self._document.paths(expr)
        except JqError as exc:
            raise UpdateError(
                component,
                field,
                f"cannot find the paths to write ({exc.kind}: {exc.message}); a written path must be a jq path "
                f"expression (field access, .[], select, //, if)",
            ) from exc
        if zip_values:
            if len(paths) != len(values):
                raise UpdateError(
                    component,
                    field,
                    f"array length mismatch: expected {len(paths)} values but got {len(values)} "
                    f"(the path selects {len(paths)} places for {len(values)} instances)",
                )
            pairs = list(zip(paths, values, strict=True))
        else:
            pairs = [(path, values[0]) for path in paths]
        if keep_absent_empty:
            pairs = [(path, value) for path, value in pairs if not (is_empty(value) and _holds_nothing(self.obj, path))]
        if not pairs:
            return
        places = [path for path, _ in pairs]
        values = [fast_copy(value) for _, value in pairs]
        try:  # a copying dry run first, so a failed write changes nothing
            set_paths(self.obj, places, values, copy=True)
        except PathError as exc:
            raise UpdateError(component, field, f"cannot write through {expr!r}: {exc}") from None
        if self.original is None:
            self.original = fast_copy(self.obj)
        root = set_paths(self.obj, places, values, copy=False)
        if root is not self.obj:  # only an empty path (`.`) replaces the root
            if not isinstance(root, dict):
                raise UpdateError(component, field, "cannot replace the whole object with a non-object")
            self.obj.clear()
            self.obj.update(root)
        self.writes += 1
        self._document.invalidate()
        self._results.clear()


def _holds_nothing(obj: Any, path: Sequence[Any]) -> bool:
    """True when the document has no value (or an empty one) at `path`; a slice step is never "nothing"."""
    if any(isinstance(step, dict) for step in path):
        return False
    return is_empty(get_path(obj, path))
