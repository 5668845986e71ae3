"""`Document`: one object, many expressions; and the module-level `evaluate`, `paths`, `assign`, `assign_each`.

A Document holds the live object (`.obj`, never copied) and caches what libjq and the fast path are given (see
`convert`), per set of referenced roots, until the object is written through the Document (or `invalidate()`).

`evaluate_many` is the fast way to run a definition: a plain path that gives only scalars (a name, a count, a
phase) runs in Python on the caller's object in place (`fastpath.compile_fast_raw`); the other plain paths and,
under an "inprocess" policy, the expressions the compiler covers (`compiler`: closures, bounded by the step budget
and the output depth) run on one normalised tree of what they read; the rest run in the jq worker as one libjq
program on one JSON text holding only the subtrees they read. libjq never runs in the calling process.

Ownership: `Document(obj)` changes `obj` in place on `assign`/`assign_each` (all paths are checked before the
first is written, so a failed write changes nothing). The module-level `assign`/`assign_each` never change the
caller's object: they return a new one that shares every subtree they did not write (copy-on-write).

Results may share structure with the Document's cache and with each other: treat them as read-only.

What runs in process, and the worker's limits, is the `EvaluationPolicy` the caller gives (`Document(obj,
policy=...)`; default: `INPROCESS`). A policy's recorder is told of every stop and may refuse an evaluation
(`EvaluationPolicy.refusal`: then it does not run and its result is the refusal).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from workload_map.errors import ArgumentTypeError
from workload_map.jq import convert
from workload_map.jq.convert import Roots
from workload_map.jq.errors import InProcessStopError, JqError, JqRuntimeError, NotPlainError
from workload_map.jq.policy import INPROCESS, EvaluationPolicy
from workload_map.jq.runtime import MAX_RESULTS

if TYPE_CHECKING:
    from workload_map.jq import engine
    from workload_map.jq.engine import Kind
else:

    class _Engine:
        """`jq.engine`, imported at the first use of one of its names, when this module's `engine` becomes the
        module itself: a command whose expressions all run stored programs (`jq.stored`: a describe of a catalog
        workload) never imports it (~1.1 million instructions; issue 19: start-up)."""

        def __getattr__(self, name: str) -> Any:
            from workload_map.jq import engine as module

            globals()["engine"] = module
            return getattr(module, name)

    engine = _Engine()

__all__ = ["Batch", "Document", "Steps", "assign", "assign_each", "evaluate", "paths"]

T = TypeVar("T")


class Batch(msgspec.Struct, frozen=True):
    """What libjq must run for a step of a Document: the expressions, the JSON text, the output cap, the kind.
    (A Struct: a NamedTuple class is ~0.5 million instructions to make at import, issue 19; the shells read its
    fields by name.)"""

    exprs: list[str]
    text: str
    max_results: int
    kind: Kind


Steps = Generator[Batch, list[list[Any] | JqError], T]
"""A Document's evaluation without its libjq call: yields `Batch`es, receives each one's results."""

_WHOLE = "*"  # cache key for the whole object (roots None)


class Document:
    """One JSON object evaluated by many jq expressions; converted at most once per set of roots.

    `policy` says where libjq runs and under which limits (`EvaluationPolicy`; None: in process, no limits).
    """

    __slots__ = ("_texts", "_trees", "obj", "policy")

    def __init__(self, obj: Any, *, policy: EvaluationPolicy | None = None) -> None:
        self.obj = obj
        self.policy = _policy(policy)
        self._texts: dict[Roots | str, str] = {}
        self._trees: dict[Roots | str, Any] = {}

    def __repr__(self) -> str:
        return f"Document({type(self.obj).__name__}, mode={self.policy.mode!r})"

    # --- conversion ---------------------------------------------------------------------------------------

    def invalidate(self) -> None:
        """Forget cached conversions: call it after changing `.obj` other than through this Document."""
        self._texts.clear()
        self._trees.clear()

    def _text(self, roots: Roots | None) -> str:
        key: Roots | str = _WHOLE if roots is None else roots
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = convert.encode(convert.prune(self.obj, roots))
        return text

    def _tree(self, roots: Roots | None) -> Any:
        key: Roots | str = _WHOLE if roots is None else roots
        if key not in self._trees:
            self._trees[key] = convert.normalize(convert.prune(self.obj, roots))
        return self._trees[key]

    # --- reading ------------------------------------------------------------------------------------------

    def evaluate(self, expr: str, field_path: str | None = None, *, max_results: int = MAX_RESULTS) -> list[Any]:
        """All outputs of `expr` in order; raises the JqError (placed at `field_path` when given)."""
        if self.policy.stops is None and type(expr) is str:  # no recorder to ask: a plain path may answer at once
            info = engine.compile_expression(expr)
            if info.fast is not None and expr not in _GIVES_CONTAINERS:
                found = self._run_in_place(info, max_results)
                if type(found) is list:
                    return found
        result = self.evaluate_many([expr], [field_path], max_results=max_results)[0]
        if isinstance(result, JqError):
            raise result
        return result

    def evaluate_many(
        self,
        exprs: Sequence[str],
        field_paths: Sequence[str | None] | None = None,
        *,
        max_results: int = MAX_RESULTS,
    ) -> list[list[Any] | JqError]:
        """Each expression's outputs, or its JqError, in order: one failure never affects the others."""
        return self.run(self.evaluate_many_steps(exprs, field_paths, max_results=max_results))

    def evaluate_many_steps(
        self,
        exprs: Sequence[str],
        field_paths: Sequence[str | None] | None = None,
        *,
        max_results: int = MAX_RESULTS,
    ) -> Steps[list[list[Any] | JqError]]:
        """`evaluate_many` without the libjq call: yields at most one `Batch` (what libjq must run, under
        `.policy`) and takes its outcome back. The sync (`run`) and async (`workload_map.jq.aio`) shells drive it."""
        batch = _batch_key(exprs)
        results: list[list[Any] | JqError] = [[] for _ in batch]
        policy = self.policy
        closures = policy.mode == "inprocess"  # untrusted definitions (the worker) keep to libjq there
        compiled, python_run, libjq_run = _batch_split(batch, closures)
        if policy.stops is None:
            fast, slow = list(python_run), list(libjq_run)
        else:
            fast, slow = [], []
            in_python = frozenset(python_run)
            for index, expr in enumerate(batch):
                refused = policy.refusal(expr)
                if refused is not None:  # e.g. its definition was stopped earlier in the command: not evaluated
                    results[index] = refused
                else:
                    (fast if index in in_python else slow).append(index)
        if fast:
            # a plain path that gives only scalars reads the caller's object in place (it looks at nothing but the
            # containers on its way) unless the normalised tree the others need holds what it reads anyway; the
            # others (the compiled closures, and the plain paths seen to give containers) share that one tree, so
            # outputs that overlap (a pod template and its containers) are converted once
            gives_containers = frozenset(_GIVES_CONTAINERS.intersection(exprs)) if _GIVES_CONTAINERS else _NO_HINTS
            in_place = _in_place_plan(tuple(exprs), closures, gives_containers)
            on_tree: list[int] = []
            for index in fast:
                info = compiled[index]
                found = self._run_in_place(info, max_results) if index in in_place else None
                if found is None:
                    on_tree.append(index)
                else:
                    results[index] = found
            if on_tree:
                tree = self._tree(_roots_of(batch, tuple(on_tree)))
                for index in on_tree:
                    result = results[index] = _run_fast(compiled[index], tree, max_results)
                    if isinstance(result, InProcessStopError):
                        policy.stopped(result)
        if slow:
            text = self._text(_roots_of(batch, tuple(slow)))
            outcome = yield Batch([exprs[i] for i in slow], text, max_results, "values")
            for index, result in zip(slow, outcome, strict=True):
                results[index] = result
        if field_paths is not None:
            for index, field_path in enumerate(field_paths):
                result = results[index]
                if field_path and isinstance(result, JqError):
                    results[index] = result.with_field_path(field_path)
        return results

    def _run_in_place(self, info: engine.Compiled, max_results: int) -> list[Any] | JqError | None:
        """A plain path's outputs on the object as it stands, when they are all scalars (an integral float given
        as the int the normalised tree holds); None when it must run on the normalised tree instead: an output is
        a container or a value of no JSON type, the object may read differently normalised there
        (`NotPlainError`), or the path fails (so the error shows the normalised values)."""
        raw = info.raw
        if raw is None:
            return None
        try:
            outputs = raw(self.obj)
        except (JqError, NotPlainError):
            return None
        if len(outputs) >= max_results:
            return engine.limit_error(info.expression, max_results)
        for position, output in enumerate(outputs):
            kind = type(output)
            if kind is str or kind is bool or output is None or (kind is int and -_INT64 <= output < _INT64):
                continue
            if kind is not float or not math.isfinite(output):
                if kind is dict or kind is list:
                    if len(_GIVES_CONTAINERS) >= _HINTS_MAX:
                        _GIVES_CONTAINERS.clear()
                    _GIVES_CONTAINERS.add(info.expression)
                return None
            if output.is_integer() and -_SAFE < output < _SAFE:
                outputs[position] = int(output)
        return outputs

    def paths(self, expr: str, field_path: str | None = None) -> list[list[Any]]:
        """Every path `expr` selects (`[path(expr)]`): keys, indexes, and `{start, end}` for slices."""
        return self.run(self.paths_steps(expr, field_path))

    def paths_steps(self, expr: str, field_path: str | None = None) -> Steps[list[list[Any]]]:
        """`paths` without the libjq call (see `evaluate_many_steps`)."""
        roots = engine.compile_expression(_expression(expr)).roots
        result: list[list[Any]] | JqError | None = None
        if self.policy.stops is not None:
            result = self.policy.refusal(expr)
        finder = None
        if result is None:
            from workload_map.jq.fastpath import compile_fast_paths  # the front end: imported with the first use

            finder = compile_fast_paths(expr)
        if finder is not None:  # plain paths: in Python, on the normalised tree libjq's text is made from
            try:
                result = finder(self._tree(roots))
            except JqError as exc:
                result = exc
            if isinstance(result, list) and len(result) >= MAX_RESULTS:
                result = engine.limit_error(expr, MAX_RESULTS)
        if result is None:
            result = (yield Batch([expr], self._text(roots), MAX_RESULTS, _PATHS))[0]
        if isinstance(result, JqError):
            raise result.with_field_path(field_path) if field_path else result
        return result

    def run(self, steps: Steps[T]) -> T:
        """Drive steps to their result, each `Batch` run by `worker.run_batch` under `.policy` (blocking)."""
        outcome: list[list[Any] | JqError] | None = None
        while True:
            try:
                batch = steps.send(outcome)  # type: ignore[arg-type]
            except StopIteration as stop:
                result: T = stop.value
                return result
            # imported when a batch needs libjq, not with the module: compiled expressions never do, and the
            # worker module (with subprocess) is ~3 ms of every start-up (issue 19)
            from workload_map.jq import worker

            outcome = worker.run_batch(self.policy, batch.exprs, batch.text, batch.max_results, batch.kind)

    # --- writing ------------------------------------------------------------------------------------------

    def assign(self, expr: str, value: Any, field_path: str | None = None) -> None:
        """Set `value` at every path `expr` selects (jq `(expr) = $value`), changing `.obj` in place."""
        found = self.paths(expr, field_path)
        self._write(expr, found, [value] * len(found), field_path)

    def assign_each(self, expr: str, values: Sequence[Any], field_path: str | None = None) -> None:
        """Set `values[i]` at the i-th path `expr` selects; the counts must match."""
        found = self.paths(expr, field_path)
        if len(found) != len(values):
            error = JqRuntimeError(
                expr, f"array length mismatch: expected {len(found)} values but got {len(values)}", field_path
            )
            raise error
        self._write(expr, found, values, field_path)

    def _write(self, expr: str, found: list[list[Any]], values: Sequence[Any], field_path: str | None) -> None:
        plain = [convert.to_plain(value) for value in values]
        from workload_map.jq.writeback import PathError, set_paths  # writes only: not imported to read (issue 19)

        try:
            set_paths(self.obj, found, plain, copy=True)  # dry run: the in-place pass below cannot fail
        except PathError as exc:
            raise JqRuntimeError(expr, str(exc), field_path) from None
        self.obj = set_paths(self.obj, found, plain, copy=False)
        self.invalidate()


_PATHS: Kind = "paths"


def _policy(policy: EvaluationPolicy | None) -> EvaluationPolicy:
    if policy is None:
        return INPROCESS
    if not isinstance(policy, EvaluationPolicy):
        raise ArgumentTypeError("policy", "a workload_map.jq.EvaluationPolicy or None", policy)
    return policy


def _expression(expr: Any) -> str:
    if not isinstance(expr, str):
        raise ArgumentTypeError("a jq expression", "a string", expr)
    return expr


def _union(roots: Any) -> Roots | None:
    merged: set[tuple[str | int | None, ...]] = set()
    for item in roots:
        if item is None:
            return None
        merged.update(item)
    return frozenset(merged)


def _batch_key(exprs: Sequence[str]) -> tuple[str, ...]:
    """The batch as a tuple of strings (the key of its cached plan); a non-string raises ArgumentTypeError."""
    batch = tuple(exprs)
    if not all(type(expr) is str for expr in batch):
        for expr in batch:
            _expression(expr)
    return batch


@functools.lru_cache(maxsize=1024)
def _batch_split(
    batch: tuple[str, ...], closures: bool
) -> tuple[tuple[engine.Compiled, ...], tuple[int, ...], tuple[int, ...]]:
    """A batch's compiled expressions, the indices Python runs (plain paths, and compiled closures when
    `closures`) and those libjq runs, each in order: the same for every object a definition's batch is evaluated
    on, so worked out once per batch (the per-workload cost of `wmap get` is mostly such batches)."""
    compiled = tuple(engine.compile_expression(expr) for expr in batch)
    python = [
        index
        for index, info in enumerate(compiled)
        if info.fast is not None or (closures and info.compiled is not None)
    ]
    taken = frozenset(python)
    return compiled, tuple(python), tuple(index for index in range(len(batch)) if index not in taken)


@functools.lru_cache(maxsize=4096)
def _roots_of(batch: tuple[str, ...], indices: tuple[int, ...]) -> Roots | None:
    """What the expressions at `indices` of the batch read, merged (None: the whole object)."""
    return _union(engine.compile_expression(batch[index]).roots for index in indices)


_INT64 = 2**63
_SAFE = 2**53


@functools.lru_cache(maxsize=1024)
def _in_place_plan(exprs: tuple[str, ...], closures: bool, gives_containers: frozenset[str]) -> frozenset[int]:
    """The plain paths of a batch worth trying on the object in place: those whose reads the normalised tree does
    not already hold. The tree holds what the compiled closures read and what the plain paths in
    `gives_containers` read (a path under a subtree it keeps whole is answered from the tree at no extra
    conversion, so trying it in place first would only add a walk). Cached per batch and set of such paths."""
    infos = [engine.compile_expression(expr) for expr in exprs]
    tree: set[tuple[str | int | None, ...]] = set()
    for info in infos:
        if (info.fast is None and closures and info.compiled is not None) or info.expression in gives_containers:
            if info.roots is None:
                return frozenset()  # the tree is the whole object: every path is answered from it
            tree |= info.roots
    return frozenset(
        index
        for index, info in enumerate(infos)
        if info.fast is not None
        and info.expression not in gives_containers
        and (info.roots is None or not all(any(root[: len(kept)] == kept for kept in tree) for root in info.roots))
    )


_GIVES_CONTAINERS: set[str] = set()
"""Plain paths seen to output a container (a pod template, conditions) when tried in place: a hint, not a fact
(the same path may give a scalar on another object), so such a path goes to the tree first next time instead of
being walked twice. Speed only: either way the outputs are the same. Bounded (cleared past `_HINTS_MAX`)."""
_HINTS_MAX = 4096
_NO_HINTS: frozenset[str] = frozenset()


def _run_fast(info: engine.Compiled, tree: Any, max_results: int) -> list[Any] | JqError:
    if info.fast is None:  # compiled to closures: they count their outputs and steps themselves
        assert info.compiled is not None
        try:
            return info.compiled(tree, max_results)
        except JqError as exc:
            return exc
    try:
        outputs = info.fast(tree)
    except JqError as exc:
        return exc
    if len(outputs) >= max_results:
        return engine.limit_error(info.expression, max_results)
    return outputs


# --- module-level functions ---------------------------------------------------------------------------------


def evaluate(
    expr: str,
    obj: Any,
    *,
    field_path: str | None = None,
    max_results: int = MAX_RESULTS,
    policy: EvaluationPolicy | None = None,
) -> list[Any]:
    """All outputs of `expr` on `obj`, in order (`Document(obj, policy=policy).evaluate(expr)`)."""
    return Document(obj, policy=policy).evaluate(expr, field_path, max_results=max_results)


def paths(
    expr: str, obj: Any, *, field_path: str | None = None, policy: EvaluationPolicy | None = None
) -> list[list[Any]]:
    """Every path `expr` selects in `obj` (`[path(expr)]`)."""
    return Document(obj, policy=policy).paths(expr, field_path)


def assign(
    expr: str, obj: Any, value: Any, *, field_path: str | None = None, policy: EvaluationPolicy | None = None
) -> Any:
    """A new object: `obj` with `value` at every path `expr` selects. `obj` itself is not changed."""
    found = Document(obj, policy=policy).paths(expr, field_path)
    return _copy_write(expr, obj, found, [value] * len(found), field_path)


def assign_each(
    expr: str,
    obj: Any,
    values: Sequence[Any],
    *,
    field_path: str | None = None,
    policy: EvaluationPolicy | None = None,
) -> Any:
    """A new object: `obj` with `values[i]` at the i-th path `expr` selects. `obj` itself is not changed."""
    found = Document(obj, policy=policy).paths(expr, field_path)
    if len(found) != len(values):
        raise JqRuntimeError(
            expr, f"array length mismatch: expected {len(found)} values but got {len(values)}", field_path
        )
    return _copy_write(expr, obj, found, values, field_path)


def _copy_write(expr: str, obj: Any, found: list[list[Any]], values: Sequence[Any], field_path: str | None) -> Any:
    from workload_map.jq.writeback import PathError, set_paths  # writes only: not imported to read (issue 19)

    try:
        return set_paths(obj, found, [convert.to_plain(value) for value in values], copy=True)
    except PathError as exc:
        raise JqRuntimeError(expr, str(exc), field_path) from None
