"""Pod selectors: which component, instance, replica and gang a live pod belongs to (karta-spec §5, §12.1).

Every path here runs against the **Pod object**, never the workload. `PodQuerier(pod)` wraps one pod; each jq
expression is evaluated at most once per pod. Expressions the jq layer's fast path covers (plain paths such as
`.metadata.labels["k"]`, constants such as `"worker"`, `//`, iteration) run in Python straight on the pod, with no
conversion; anything else goes to one `jq.Document` per pod, created only when needed, under the querier's
`jq.EvaluationPolicy` (the workload's: `PodQuerier(pod, policy=workload.policy)`). `matchLabels` never involves jq.

Divergence from upstream (docs/compatibility.md): `componentTypeSelector.value` is compared in Python with each
output of `keyPath`, not by concatenating `<keyPath> == "<value>"` into one jq program.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.errors import ArgumentTypeError, WorkloadMapError
from workload_map.jq import Document, EvaluationPolicy, JqError, JqRuntimeError
from workload_map.jq.convert import InputNotJSONError
from workload_map.jq.fastpath import compile_fast
from workload_map.model import ComponentInstanceSelector, ComponentTypeSelector, ReplicaSelector

__all__ = [
    "InstanceNotFound",
    "PodQuerier",
    "SelectorError",
    "go_string",
    "matches_component_type",
    "matches_labels",
]


class SelectorError(WorkloadMapError, ValueError):
    """A pod selector could not be evaluated on a pod: a jq error, or not exactly one usable output.

    `.path` is the expression, `.reason` the bare cause (`expected single query result, got 2`).
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message


class InstanceNotFound(SelectorError):  # noqa: N818 (upstream's name)
    """The pod's instance id is none of the component's instance ids (e.g. a leftover of a removed instance)."""

    def __init__(self, value: str, ids: Sequence[str]) -> None:
        super().__init__(f'could not match instance id "{value}". existing instance ids {go_string(list(ids))}')
        self.value = value
        self.ids = tuple(ids)


# ---------------------------------------------------------------------------------------------------------------
# Go-style stringification (upstream formats selector outputs with %v)


def go_string(value: Any) -> str:
    """`value` as Go's `fmt` `%v` prints the decoded JSON value: integral numbers as integers, `true`/`false`,
    `<nil>`, lists as `[a b]`, objects as `map[k:v]` (keys sorted)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list):
        return "[" + " ".join(go_string(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{go_string(value[key])}" for key in sorted(value)) + "]"
    return str(value)


# ---------------------------------------------------------------------------------------------------------------
# the querier


def matches_labels(labels: Mapping[str, Any] | None, match_labels: Mapping[str, str] | None) -> bool:
    """Every entry present in `labels` and exactly equal (an empty expected value does not match a missing label).
    An empty or missing `match_labels` matches."""
    if match_labels is not None and not isinstance(match_labels, Mapping):
        raise ArgumentTypeError("match_labels", "a mapping of label to value or None", match_labels)
    if labels is not None and not isinstance(labels, Mapping):
        raise ArgumentTypeError("the labels", "a mapping of label to value or None", labels)
    if not match_labels:
        return True
    if not labels:
        return False
    for key, expected in match_labels.items():
        actual = labels.get(key)
        if actual is None or actual != expected:
            return False
    return True


class PodQuerier:
    """One pod, asked which component, instance, replica and gang it belongs to.

    Each expression runs at most once per querier (results are cached); a jq `Document` is created only for an
    expression the fast path cannot answer. The fast path reads the pod as given, so an iteration over an object
    yields its values in the pod's key order rather than jq's sorted order; no selector rule depends on output
    order (`any`, counts). `fast=False` sends every expression to jq (differential tests). `policy` says where
    libjq runs (None: in process); pass the workload's (`workload.policy`), whose definition the selectors come from.
    """

    __slots__ = ("_document", "_fast", "_policy", "_results", "pod")

    def __init__(self, pod: Mapping[str, Any], *, fast: bool = True, policy: EvaluationPolicy | None = None) -> None:
        if not isinstance(pod, Mapping):
            raise ArgumentTypeError("the pod", "a mapping (a Pod object)", pod)
        self.pod = pod
        self._fast = fast
        self._policy = policy
        self._document: Any = None
        self._results: dict[str, list[Any] | JqError] = {}

    # --- evaluation -------------------------------------------------------------------------------------------

    def evaluate(self, expr: str) -> list[Any]:
        """The outputs of `expr` on the pod; raises the jq layer's `JqError`."""
        result = self._results.get(expr)
        if result is None:
            result = self._evaluate(expr)
            self._results[expr] = result
        if isinstance(result, JqError):
            raise result
        return result

    def _evaluate(self, expr: str) -> list[Any] | JqError:
        evaluator = compile_fast(expr) if self._fast else None
        if evaluator is not None:
            try:
                return evaluator(self.pod)
            except JqError as error:
                return error
        if self._document is None:
            self._document = Document(self.pod, policy=self._policy)
        try:
            outputs: list[Any] = self._document.evaluate(expr)
        except JqError as error:
            return error
        except InputNotJSONError as error:  # a cyclic, too deep or unprintable pod: this pod's failure, not the run's
            return JqRuntimeError(expr, f"the pod cannot be given to jq: {error}")
        return outputs

    def _single(self, expr: str) -> Any:
        """The single-result rule: exactly one output, not null and not `""` (SelectorError otherwise)."""
        try:
            outputs = self.evaluate(expr)
        except JqError as error:
            raise SelectorError(error.message, path=expr) from error
        if len(outputs) != 1:
            raise SelectorError(f"expected single query result, got {len(outputs)}", path=expr)
        value = outputs[0]
        if value is None or value == "":
            raise SelectorError("query result is empty", path=expr)
        return value

    def single_string(self, expr: str, what: str) -> str:
        """The one non-empty string (or Go-formatted value) `expr` gives on the pod; `SelectorError` otherwise,
        naming `what` it was read for."""
        return self._single_string(expr, what)

    def _single_string(self, expr: str, what: str) -> str:
        try:
            return go_string(self._single(expr))
        except SelectorError as error:
            raise SelectorError(
                f'failed to extract {what} from path "{expr}": {error.reason}', path=expr, reason=error.reason
            ) from error

    # --- component type ----------------------------------------------------------------------------------------

    def matches_component_type(self, selector: ComponentTypeSelector | None) -> bool:
        """Whether the pod is of the component's type (karta-spec §5), checked in this order:

        1. no selector, or neither `keyPath` nor `matchLabels` -> False;
        2. any `matchLabels` entry missing or different -> False;
        3. no `keyPath` -> True;
        4. `keyPath` alone: True when any output is not null (`false` and `""` exist);
           with `value`: True when any output is exactly the string `value`.

        A jq error in `keyPath` raises `SelectorError`.
        """
        if selector is None or (not selector.key_path and not selector.match_labels):
            return False
        if selector.match_labels:
            metadata = self.pod.get("metadata")
            labels = metadata.get("labels") if isinstance(metadata, (dict, Mapping)) else None
            if not matches_labels(labels if isinstance(labels, (dict, Mapping)) else None, selector.match_labels):
                return False
        key_path = selector.key_path
        if not key_path:
            return True
        try:
            outputs = self.evaluate(key_path)
        except JqError as error:
            message = f'failed to evaluate componentTypeSelector.keyPath "{key_path}": {error}'
            raise SelectorError(message, path=key_path, reason=str(error)) from error
        if selector.value is None:
            return any(output is not None for output in outputs)
        value = selector.value
        return any(isinstance(output, str) and output == value for output in outputs)

    # --- instance and replica -------------------------------------------------------------------------------------

    def extract_instance_id(self, selector: ComponentInstanceSelector | None) -> str | None:
        """The pod's instance id, or None when there is no selector (or its `idPath` is empty)."""
        if selector is None or not selector.id_path:
            return None
        return self._single_string(selector.id_path, "instance id")

    def extract_replica_key(self, selector: ReplicaSelector | None) -> str | None:
        """The pod's replica (group) key, or None when there is no selector (or its `keyPath` is empty)."""
        if selector is None or not selector.key_path:
            return None
        return self._single_string(selector.key_path, "replica key")

    def matching_instance_id(self, selector: ComponentInstanceSelector | None, ids: Sequence[str]) -> str:
        """The member of `ids` this pod belongs to.

        Without a selector: `""` when `ids` is exactly `[""]` (a single-instance component), else SelectorError.
        With one: the pod's extracted id if it is in `ids`, else `InstanceNotFound`.
        """
        if selector is None or not selector.id_path:
            if list(ids) == [""]:
                return ""
            raise SelectorError("no instance selector provided but instance ids are not empty")
        value = self.extract_instance_id(selector)
        assert value is not None
        if value in ids:
            return value
        raise InstanceNotFound(value, ids)

    # --- gang keys and filters -------------------------------------------------------------------------------

    def group_keys(self, paths: Sequence[str] | None) -> list[str]:
        """One key per path (single-result rule each); `[]` for no paths."""
        return [self._single_string(path, "group key") for path in paths or ()]

    def passes_filters(self, filters: Sequence[str] | None) -> bool:
        """True when every filter yields exactly `true` (True for no filters).

        A filter that yields another single value (`false`, a string, a number) makes it False, not an error; a jq
        error, no output, several outputs, or null raise `SelectorError`.
        """
        for expr in filters or ():
            try:
                value = self._single(expr)
            except SelectorError as error:
                raise SelectorError(
                    f'failed to evaluate filter "{expr}": {error.reason}', path=expr, reason=error.reason
                ) from error
            if value is not True:
                return False
        return True


def matches_component_type(pod: Mapping[str, Any], selector: ComponentTypeSelector | None) -> bool:
    """`PodQuerier(pod).matches_component_type(selector)` for a one-off check."""
    return PodQuerier(pod).matches_component_type(selector)
