"""One state of a workload's document: the object, its jq `Document`, and the outputs evaluated on it.

The first snapshot of a workload reads the caller's object in place when it is plain JSON (no copy of the whole
object before anything is read; see `Snapshot(shared=True)`), and of a plain dict checks that only as far as each
read needs: the status only along what the status expressions read, anything else the whole object, once
(`Snapshot(status_reads=...)`). A snapshot never changes: a write makes a new one
(copy-on-write along the written paths, see `session.py`), so a `Resolution` taken before a write keeps
describing the object it was taken from. Outputs are evaluated on first
use, group by group: the first read of a structure path evaluates every structure path of the definition, the first
read of the status every status expression, each group in one `evaluate_many` call (one conversion of what it
reads), so a caller that reads only the status converts only what the status reads.
"""

from __future__ import annotations

import functools
from _thread import allocate_lock  # what threading.Lock is, without importing threading (issue 19: start-up)
from collections.abc import Callable, Sequence
from typing import Any

from workload_map.jq import Document, EvaluationPolicy, JqError, facts, stored
from workload_map.jq.errors import NotPlainError
from workload_map.jq.finish import BAIL
from workload_map.jq.generated import evaluate_batch
from workload_map.jq.runtime import MAX_RESULTS
from workload_map.resolve._json import NotJSONError, ReadPart, json_copy, part_shareable, plain_identity, shareable
from workload_map.resolve.errors import ExtractionError, InvalidObjectError

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
        "_invalid",
        "_lock",
        "_results",
        "_source",
        "_status_ok",
        "_status_reads",
        "_unchecked",
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
        status_reads: tuple[frozenset[str], ReadPart | None] | None = None,
    ) -> None:
        """`plan`: groups of expressions evaluated together (the first read of one evaluates its whole group).

        `shared`: `obj` is the caller's own object, plain JSON (`_json.shareable`), read in place and never changed:
        the jq Document converts from it what each group reads (it copies, as it does for any object), and `.obj`,
        the document as a plain copy, is made only when something asks for it (a write, `to_object`). Otherwise
        `obj` is already this snapshot's own document. `identity_plain`: `plain_identity(obj)`, when the caller
        has worked it out already (the workload does, for its GVK), so it is not checked twice.

        `status_reads` (with `shared`): `obj` is the caller's dict, not checked yet (`Workload` of a plain dict),
        and what the status reads: its expressions and their read patterns (`structure.StatusReads`; the patterns
        None: anything). A status read (those expressions only, and `document`) checks `obj` along the patterns
        (`_json.part_shareable`) and reads it in place when that part passes; anything else, or a status whose part
        does not pass, first takes the whole-object path once: the object read in place when `shareable`, else its
        `json_copy`, whose `NotJSONError` is raised as `InvalidObjectError` (at every read that needs the whole
        object, as the constructor raised it before)."""
        self._source = obj
        self._identity_plain = identity_plain
        self._copy: dict[str, Any] | None = None if shared else obj
        self.policy = policy  # where the definition's expressions run, on this object and its pods
        self._group_of = _group_of(plan)
        self._document = Document(obj, policy=policy)
        self._results: dict[str, list[Any] | JqError] = {}
        self._in_place: dict[str, list[Any] | None] = {}  # what `objects` read in place (None: it could not)
        # what the status reads while the whole object is unchecked, and whether that part passed its check
        self._status_reads = status_reads if shared else None
        self._status_ok = False
        self._unchecked = shared and status_reads is not None
        self._invalid: str | None = None  # the whole-object path's error, raised at every read that needs it
        # evaluation fills the cache once; a lock keeps two threads reading one resolution from converting twice
        self._lock = allocate_lock()

    def check_whole(self) -> None:
        """Take the whole-object path if it was not taken (see `__init__`); raises its `InvalidObjectError`."""
        if self._unchecked:
            with self._lock:
                if self._unchecked and self._invalid is None:
                    source = self._source
                    if shareable(source):
                        self._unchecked = False
                    else:
                        try:
                            copy = json_copy(source)
                        except NotJSONError as exc:
                            self._invalid = f"the workload object cannot be read as JSON: {exc}"
                        else:  # what was evaluated already (the status) reads the same in the copy
                            self._copy = self._source = copy
                            self._identity_plain = None
                            self._document = Document(copy, policy=self.policy)
                            self._unchecked = False
            if self._invalid is not None:
                raise InvalidObjectError(self._invalid)

    def _check_status(self) -> None:
        """Before evaluating status expressions: their part of the object checked, else the whole object."""
        if not self._unchecked or self._status_ok:
            return
        reads = self._status_reads
        if reads is not None and reads[1] is not None and part_shareable(self._source, reads[1]):
            self._status_ok = True  # the status reads the object in place from now on
            return
        self.check_whole()

    def _check_for(self, expressions: Sequence[str]) -> None:
        if self._unchecked:
            reads = self._status_reads
            if reads is not None and reads[0].issuperset(expressions):
                self._check_status()
            else:
                self.check_whole()

    @property
    def obj(self) -> dict[str, Any]:
        """The document as a plain dict of its own (for a shared object: copied on first use)."""
        self.check_whole()
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
        self._check_for(expressions)
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
        """The jq Document of this snapshot's object, for the status read alone (`status_plan.planned_status`: the
        status's generated functions on its object in place): its object is checked only along what the status
        expressions read."""
        self._check_status()
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
        self.check_whole()
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
        read = _in_place_reader(expr)
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
        self.check_whole()
        found: list[list[Any]] = self._document.paths(expr)
        return found


__all__ = ["Snapshot"]


def _in_place_reader(expr: str) -> Callable[[Any], list[Any]] | None:
    """What reads `expr` on the caller's own object, as `fastpath.compile_fast_raw` does (None: it does not): for a
    catalog expression the catalog knows to be such a path (`jq.facts.plain`), its stored program (`jq.stored`)
    with the outputs left as they stand, so a describe of a catalog workload never imports the fast path (issue 19:
    start-up); the program bails wherever the fast path raises `NotPlainError` or a jq error."""
    plain = facts.plain(expr)
    if plain is False:
        return None
    program = stored.program(expr) if plain else None
    if program is not None:
        return functools.partial(_read_by_program, program)
    from workload_map.jq.fastpath import compile_fast_raw

    return compile_fast_raw(expr)


def _as_they_stand(outputs: list[Any]) -> list[Any]:
    return outputs


def _read_by_program(program: stored.Program, obj: Any) -> list[Any]:
    found = program(obj, {}, _as_they_stand)
    if found is BAIL:
        raise NotPlainError
    outputs: list[Any] = found
    return outputs
