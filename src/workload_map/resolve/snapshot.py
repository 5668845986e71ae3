"""One state of a workload's document: the object, its jq `Document`, and the outputs evaluated on it.

The first snapshot of a workload reads the caller's object in place when it is plain JSON (no copy of the whole
object before anything is read; see `Snapshot(shared=True)`). A snapshot never changes: a write makes a new one
(copy-on-write along the written paths, see `session.py`), so a `Resolution` taken before a write keeps
describing the object it was taken from. Outputs are evaluated on first
use, group by group: the first read of a structure path evaluates every structure path of the definition, the first
read of the status every status expression, each group in one `evaluate_many` call (one conversion of what it
reads), so a caller that reads only the status converts only what the status reads.
"""

from __future__ import annotations

from _thread import allocate_lock  # what threading.Lock is, without importing threading (issue 19: start-up)
from collections.abc import Sequence
from typing import Any

from workload_map.jq import Document, EvaluationPolicy, JqError
from workload_map.jq.engine import MAX_RESULTS
from workload_map.jq.fastpath import NotPlainError, compile_fast_raw
from workload_map.jq.generated import evaluate_batch
from workload_map.resolve._json import json_copy, plain_identity
from workload_map.resolve.errors import ExtractionError

# id(plan) -> (plan, each expression's group): a plan is a definition's `Structure.plan_groups` (a tuple of tuples,
# immutable), so its index is worked out once per definition, not once per snapshot; holding the plan keeps its id
# from being reused while the entry lives
_GROUPS: dict[int, tuple[Sequence[Sequence[str]], dict[str, Sequence[str]]]] = {}
_GROUPS_MAX = 1024


def _group_of(plan: Sequence[Sequence[str]]) -> dict[str, Sequence[str]]:
    """Each expression of `plan` with the group it is evaluated in (the first group that names it). Read only."""
    held = _GROUPS.get(id(plan))
    if held is not None and held[0] is plan:
        return held[1]
    found: dict[str, Sequence[str]] = {}
    for group in plan:
        for expr in group:
            found.setdefault(expr, group)
    if type(plan) is tuple and all(type(group) is tuple for group in plan):  # only what cannot change is kept
        if len(_GROUPS) >= _GROUPS_MAX:
            _GROUPS.clear()
        _GROUPS[id(plan)] = (plan, found)
    return found


class Snapshot:
    """The object at one moment and everything evaluated on it (never mutated once built)."""

    __slots__ = (
        "_copy",
        "_document",
        "_group_of",
        "_identity_plain",
        "_in_place",
        "_lock",
        "_results",
        "_source",
        "policy",
    )

    def __init__(
        self,
        obj: dict[str, Any],
        plan: Sequence[Sequence[str]],
        policy: EvaluationPolicy,
        *,
        shared: bool = False,
        identity_plain: bool | None = None,
    ) -> None:
        """`plan`: groups of expressions evaluated together (the first read of one evaluates its whole group).

        `shared`: `obj` is the caller's own object, plain JSON (`_json.shareable`), read in place and never changed:
        the jq Document converts from it what each group reads (it copies, as it does for any object), and `.obj`,
        the document as a plain copy, is made only when something asks for it (a write, `to_object`). Otherwise
        `obj` is already this snapshot's own document. `identity_plain`: `plain_identity(obj)`, when the caller
        has worked it out already (the workload does, for its GVK), so it is not checked twice."""
        self._source = obj
        self._identity_plain = identity_plain
        self._copy: dict[str, Any] | None = None if shared else obj
        self.policy = policy  # where the definition's expressions run, on this object and its pods
        self._group_of = _group_of(plan)
        self._document = Document(obj, policy=policy)
        self._results: dict[str, list[Any] | JqError] = {}
        self._in_place: dict[str, list[Any] | None] = {}  # what `objects` read in place (None: it could not)
        # evaluation fills the cache once; a lock keeps two threads reading one resolution from converting twice
        self._lock = allocate_lock()

    @property
    def obj(self) -> dict[str, Any]:
        """The document as a plain dict of its own (for a shared object: copied on first use)."""
        found = self._copy
        if found is None:
            with self._lock:
                found = self._copy
                if found is None:
                    found = self._copy = json_copy(self._source)
        return found

    def identity_source(self) -> dict[str, Any]:
        """What to read the object's identity (apiVersion, kind, metadata names) from: the object in place when
        those fields are plain, else the copy (a YAML timestamp as creationTimestamp: the copy makes it a string)."""
        source = self._source
        if self._copy is None:
            plain = self._identity_plain
            if plain is None:
                plain = plain_identity(source)
            if not plain:
                return self.obj
        return source

    def prefetch(self, expressions: Sequence[str]) -> None:
        """Evaluate, in one call, `expressions` and the rest of their plan groups, whatever is not yet cached."""
        with self._lock:
            grouped = [member for expr in expressions for member in self._group_of.get(expr, ())]
            wanted = [expr for expr in dict.fromkeys([*expressions, *grouped]) if expr and expr not in self._results]
            if not wanted:
                return
            # one generated function per group (jq/codegen.py) reads the object in place; what it does not answer
            # goes through the Document as before
            results = evaluate_batch(self._document, wanted)
            self._results.update(zip(wanted, results, strict=True))

    @property
    def document(self) -> Document:
        """The jq Document of this snapshot's object (for the generated status read, `status_plan.planned_status`)."""
        return self._document

    def results(self, expressions: Sequence[str]) -> list[list[Any] | JqError]:
        """Each expression's outputs (the cache's own lists) or its `JqError`, evaluated as `prefetch` does: for
        a reader that takes a group's results at once (the status plan, `status_plan.StatusPlan`)."""
        found = self._results
        if any(expr not in found for expr in expressions):
            self.prefetch(expressions)
        return [found[expr] for expr in expressions]

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

    def objects(self, expr: str, component: str, field: str) -> tuple[list[Any], bool]:
        """The outputs of a path whose outputs are objects a reader only reads (a pod template, spec or metadata),
        and whether they are the document's own: `(outputs, True)` when `expr` is a plain path in no group of the
        plan (`Structure.in_place`) whose every output, read in place, is an object or null; else
        `(self.outputs(expr, ...), False)`. Outputs read in place are the document's own subtrees, in its key
        order: never hand them out or change them; `convert.normalize` of one is what `outputs` would give."""
        found = self._in_place.get(expr)
        if found is None and expr not in self._in_place:
            with self._lock:
                if expr not in self._in_place:
                    self._in_place[expr] = self._read_in_place(expr)
                found = self._in_place[expr]
        if found is None:
            return self.outputs(expr, component, field), False
        return found, True

    def _read_in_place(self, expr: str) -> list[Any] | None:
        if expr in self._group_of or expr in self._results:
            return None  # evaluated with its group anyway
        policy = self.policy
        if policy.stops is not None and policy.refusal(expr) is not None:
            return None  # `outputs` gives the refusal
        read = compile_fast_raw(expr)
        if read is None:
            return None
        try:
            found = read(self._document.obj)
        except (JqError, NotPlainError):  # the error's text, or what normalising changes, is the Document's to say
            return None
        if len(found) >= MAX_RESULTS:
            return None
        for output in found:
            if output is not None and type(output) is not dict:
                return None  # a scalar, an array or a typed value: the decoding and its message read it normalised
        return found

    def paths(self, expr: str) -> list[list[Any]]:
        """The paths `expr` selects (for write-back); raises `JqError`."""
        found: list[list[Any]] = self._document.paths(expr)
        return found


__all__ = ["Snapshot"]
