"""The write side of a workload: the current snapshot of its document, the original, and write-back.

Every component of a workload reads and writes through one session, so an update through one component is seen by
every later read. A write never changes a snapshot: it sets the paths copy-on-write and makes a new snapshot (and
with it a new `Resolution`), so what was read before the write stays as it was read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from workload_map.jq import EvaluationPolicy, JqError
from workload_map.resolve import extract
from workload_map.resolve._json import NotJSONError, get_path, in_document_form, is_empty, jq_json, json_copy
from workload_map.resolve.errors import ExtractionError, UpdateError
from workload_map.resolve.resolution import Resolution
from workload_map.resolve.results import WorkloadStatus
from workload_map.resolve.snapshot import Snapshot
from workload_map.resolve.structure import PART_STATUS, StatusReads, Structure


class Session:
    """The document of one workload, snapshot by snapshot, and its resolution."""

    def __init__(
        self,
        obj: dict[str, Any],
        structure: Structure,
        *,
        policy: EvaluationPolicy,
        related: Sequence[Mapping[str, Any]] = (),
        shared: bool = False,
        identity_plain: bool | None = None,
        status_reads: StatusReads | None = None,
    ) -> None:
        """`shared`: `obj` is the caller's plain-JSON object, read in place (see `Snapshot`); `identity_plain`:
        `_json.plain_identity(obj)` when the caller already worked it out; `status_reads` (with `shared`): `obj`
        is the caller's dict, not checked yet, each read checking what it needs (`Snapshot`)."""
        self.structure = structure
        self.policy = policy
        self.related = tuple(related)
        self.original: dict[str, Any] | None = None  # the document before the first write
        self.writes = 0
        self._snapshot = Snapshot(
            obj,
            structure.plan_groups,
            policy,
            shared=shared,
            identity_plain=identity_plain,
            status_reads=None if status_reads is None else (status_reads.expressions, status_reads.part),
        )
        self._resolution: Resolution | None = None
        # a status read without a resolution, by component: (snapshot, status, its errors) of the snapshot it read
        self._status_reads: dict[str, tuple[Snapshot, WorkloadStatus | None, tuple[ExtractionError, ...]]] = {}

    @property
    def obj(self) -> dict[str, Any]:
        """The current document (the caller must not change it: write through `write`)."""
        return self._snapshot.obj

    @property
    def snapshot(self) -> Snapshot:
        """The current snapshot (a reader of one part, `Workload.status`, reads it without a `Resolution`)."""
        return self._snapshot

    @property
    def made_resolution(self) -> Resolution | None:
        """The current snapshot's resolution if one was made already, else None (none is made)."""
        return self._resolution

    @property
    def resolution(self) -> Resolution:
        """The resolution of the current snapshot (one per snapshot)."""
        found = self._resolution
        if found is None:
            found = self._resolution = Resolution(self.structure, self._snapshot, related=self.related)
        return found

    def status(self, component: str) -> WorkloadStatus | None:
        """The status part of `component` as the resolution reads it, strictly (its first error raised), without
        making a `Resolution` when none was made yet: its `ResolvedComponent`s and `ObjectRef` are a fifth of reading
        the status alone (issue 19: `wmap get`, informer views). Once per snapshot; a resolution made later reads its
        own, equal, status."""
        resolution = self._resolution
        if resolution is not None:
            found_status: WorkloadStatus | None = resolution.components[component].strict(PART_STATUS)
            return found_status
        snapshot = self._snapshot
        found = self._status_reads.get(component)
        if found is None or found[0] is not snapshot:
            errors: list[ExtractionError] = []
            status = extract.status(snapshot, self.structure.slots[component].definition, errors.append)
            found = self._status_reads[component] = (snapshot, status, tuple(errors))
        if found[2]:
            raise found[2][0]
        return found[1]

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Several writes as one: when one fails, the document is as it was before the first."""
        saved = (self._snapshot, self._resolution, self.original, self.writes)
        try:
            yield
        except BaseException:
            self._snapshot, self._resolution, self.original, self.writes = saved
            raise

    def write(
        self,
        component: str,
        field: str,
        expr: str,
        values: Sequence[Any],
        *,
        zip_values: bool,
        keep_absent_empty: bool = True,
        instances: Sequence[str] | None = None,
    ) -> None:
        """Set the paths `expr` selects: each to its own value (`zip_values`) or all to `values[0]`.

        With `keep_absent_empty`, an empty value (null, "", {}, []) is not written where the document holds
        nothing (or an empty value) at that path: an update never adds a null or empty field to an instance that
        did not have it. Two values for one place (instances whose paths fall back to one shared field, such as
        `.spec.components[$k].image // .spec.components.image`) are written once when equal and refused when they
        differ (`instances` names them). An index may append to an array but never pad it. A written object keeps
        the key order of what it replaces, so an unchanged value leaves the document as it was, byte for byte.
        The write is all or nothing: a failure leaves the document as it was.
        """
        # imported by the first write: reading a workload never writes (issue 19: start-up)
        from workload_map.jq.writeback import PathError, path_text, set_paths

        current = self._snapshot.obj
        try:
            paths = self._snapshot.paths(expr)
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
            owners = list(instances) if instances is not None and len(instances) == len(values) else None
        else:
            pairs = [(path, values[0]) for path in paths]
            owners = None
        try:
            copies = [json_copy(value) for _, value in pairs]
        except NotJSONError as exc:
            raise UpdateError(component, field, f"the value cannot be written as JSON: {exc}") from None
        places: dict[str, int] = {}
        writes: list[tuple[list[Any], Any]] = []
        for index, ((path, _), value) in enumerate(zip(pairs, copies, strict=True)):
            if keep_absent_empty and is_empty(value) and _holds_nothing(current, path):
                continue
            key = jq_json(path)
            first = places.get(key)
            if first is None:
                places[key] = index
                writes.append((path, value))
                continue
            if jq_json(copies[first]) != jq_json(value):  # equal values: that place is written once
                who = (
                    f"instances {owners[first]!r} and {owners[index]!r}"
                    if owners is not None
                    else f"values {first} and {index}"
                )
                raise UpdateError(
                    component,
                    field,
                    f"{who} write different values to the same place, {path_text(path)} (their paths fall back to "
                    f"one shared field): nothing was written; give them equal values, or set each instance's own "
                    f"field in the object first",
                )
        if not writes:
            return
        # a written object keeps the order (and number forms) of what it replaces: getters hand out jq's sorted view
        shaped = [in_document_form(value, get_path(current, path)) for path, value in writes]
        try:  # copy-on-write: the current snapshot keeps its object
            root = set_paths(current, [path for path, _ in writes], shaped, copy=True, pad=False)
        except PathError as exc:
            raise UpdateError(component, field, f"cannot write through {expr!r}: {exc}") from None
        if not isinstance(root, dict):  # only an empty path (`.`) replaces the root
            raise UpdateError(component, field, "cannot replace the whole object with a non-object")
        if self.original is None:
            self.original = current
        self.writes += 1
        self._snapshot = Snapshot(root, self.structure.plan_groups, self.policy)
        self._resolution = None


def _holds_nothing(obj: Any, path: Sequence[Any]) -> bool:
    """True when the document has no value (or an empty one) at `path`; a slice step is never "nothing"."""
    if any(isinstance(step, dict) for step in path):
        return False
    return is_empty(get_path(obj, path))
