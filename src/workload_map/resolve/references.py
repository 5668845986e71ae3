"""Cross-object references (the `workloadmap.io/references` annotation, docs/definitions.md): which objects a
workload's definition follows, and the workload with their content offered to its expressions. Pure: the caller
brings the referenced objects (from the same input stream, a file, or the cluster layer's GETs).

    from workload_map.resolve.references import follow, references_of

    wanted, problems = references_of(karta, trainjob)        # ObjectReference(api_version, kind, object_name, ...)
    followed = follow(karta, trainjob, [runtime])            # Followed: object (with the content), missing, problems
    resolution = resolve(karta, followed.object)

The followed object is the workload with one more top-level key, `workloadmap.io/references`, holding each found
reference's content by name; resolve it to read the roles. It is for reading: write to the workload itself (a
suspend patch built from it would carry that key).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

from workload_map.errors import ArgumentTypeError
from workload_map.jq import EvaluationPolicy, JqError, evaluate
from workload_map.model import Karta
from workload_map.model.references import REFERENCES, REFERENCES_KEY, ReferenceRule, reference_rules
from workload_map.resolve.structure import _expressions, _status_expressions

__all__ = ["Followed", "ObjectReference", "follow", "needs_references", "references_of", "without_reference"]


class ObjectReference(msgspec.Struct, frozen=True):
    """One object a workload refers to: the reference's `name` in the definition, the object's apiVersion, kind,
    name and namespace (`""` when cluster-scoped)."""

    name: str
    api_version: str
    kind: str
    object_name: str
    namespace: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def describe(self) -> str:
        """`ClusterTrainingRuntime torch-distributed` (`... in namespace ml` when namespaced)."""
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.kind} {self.object_name}{where}"

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether `obj` is the referenced object (same apiVersion, kind, name; same namespace when namespaced, a
        namespace left out of a file's object counting as any)."""
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            return False
        if obj.get("apiVersion") != self.api_version or obj.get("kind") != self.kind:
            return False
        if metadata.get("name") != self.object_name:
            return False
        namespace = metadata.get("namespace")
        return not self.namespace or not namespace or namespace == self.namespace


class Followed(msgspec.Struct, frozen=True):
    """The workload with the content of each reference found (`object`), the references not found (`missing`)
    and why a reference could not be read or its content taken (`problems`, one line each)."""

    object: dict[str, Any]
    found: tuple[ObjectReference, ...] = ()
    missing: tuple[ObjectReference, ...] = ()
    problems: tuple[str, ...] = ()


def _rules(karta: Karta) -> tuple[ReferenceRule, ...]:
    if not isinstance(karta, Karta):
        raise ArgumentTypeError("the definition", "a Karta", karta)
    return reference_rules(karta.metadata.annotations if karta.metadata else None)


def _one(expression: str, obj: Mapping[str, Any], policy: EvaluationPolicy | None, what: str) -> Any:
    outputs = evaluate(expression, obj, policy=policy)
    if len(outputs) != 1:
        raise ValueError(f"{what}: {expression!r} gave {len(outputs)} outputs, not one")
    return outputs[0]


def references_of(
    karta: Karta, obj: Mapping[str, Any], *, policy: EvaluationPolicy | None = None
) -> tuple[tuple[ObjectReference, ...], tuple[str, ...]]:
    """The objects the definition's `workloadmap.io/references` name for this workload, and the problems (a
    reference whose expressions fail or give the wrong type is left out with one line saying why). A reference
    whose name is null or empty is not set: left out silently (a TrainJob always names its runtime; another kind
    may refer only sometimes)."""
    if not isinstance(obj, Mapping):
        raise ArgumentTypeError("the workload", "a mapping (a Kubernetes object)", obj)
    found: list[ObjectReference] = []
    problems: list[str] = []
    metadata = obj.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    for rule in _rules(karta):
        where = f"reference {rule.name}"
        try:
            name = _one(rule.object_name, obj, policy, f"{where}: name")
            if name is None or name == "":
                continue
            api_version = _one(rule.api_version, obj, policy, f"{where}: apiVersion")
            kind = _one(rule.kind, obj, policy, f"{where}: kind")
            namespaced = True if rule.namespaced is None else _one(rule.namespaced, obj, policy, f"{where}: namespaced")
        except (JqError, ValueError) as error:
            problems.append(f"{REFERENCES} {rule.name}: {error}" if isinstance(error, JqError) else str(error))
            continue
        texts = {"name": name, "apiVersion": api_version, "kind": kind}
        wrong = [key for key, value in texts.items() if not isinstance(value, str) or not value]
        if wrong or not isinstance(namespaced, bool):
            bad = ", ".join(wrong) if wrong else "namespaced (not a boolean)"
            problems.append(f"{where}: {bad} is not a non-empty string")
            continue
        in_namespace = (namespace if isinstance(namespace, str) else "") if namespaced else ""
        found.append(ObjectReference(rule.name, api_version, kind, name, in_namespace))
    return tuple(found), tuple(problems)


def follow(
    karta: Karta,
    obj: Mapping[str, Any],
    related: Iterable[Mapping[str, Any]],
    *,
    policy: EvaluationPolicy | None = None,
) -> Followed:
    """The workload with each referenced object found in `related` offered at `.["workloadmap.io/references"]
    .<name>` (its `content`, default the whole object), and the references not found. Without references (or none
    found) the object is the workload as given."""
    wanted, problems = references_of(karta, obj, policy=policy)
    pool = [candidate for candidate in related if isinstance(candidate, Mapping)]
    rules = {rule.name: rule for rule in _rules(karta)}
    content: dict[str, Any] = {}
    found: list[ObjectReference] = []
    missing: list[ObjectReference] = []
    notes = list(problems)
    for reference in wanted:
        target = next((candidate for candidate in pool if reference.matches(candidate)), None)
        if target is None:
            missing.append(reference)
            continue
        rule = rules[reference.name]
        if rule.content is None:
            content[reference.name] = target
        else:
            try:
                content[reference.name] = _one(rule.content, target, policy, f"reference {reference.name}: content")
            except (JqError, ValueError) as error:
                notes.append(f"reference {reference.name}: {reference.describe()}: {error}")
                continue
        found.append(reference)
    if not content:
        return Followed(dict(obj), (), tuple(missing), tuple(notes))
    return Followed({**obj, REFERENCES_KEY: content}, tuple(found), tuple(missing), tuple(notes))


def needs_references(karta: Karta) -> bool:
    """Whether the definition names any reference (then `follow` is worth a look for the objects)."""
    return bool(_rules(karta))


# what a reference can feed, in the order a message names them
_ROLES: Final = "roles"
_REPLICAS: Final = "replica counts"
_STATUS: Final = "status"


def _reads_reference(expression: str, name: str) -> bool:
    """Whether `expression` reads `.["workloadmap.io/references"].<name>`: it names the key, and the reference's name
    after it. Read from the text: the static read analysis (`jq.reads`) is sound but keeps the whole input through
    a `select`, which would count every such expression; an expression reaches the content only through the key."""
    import re  # only when a reference is missing: not on the common path

    _, key, rest = expression.partition(REFERENCES_KEY)
    return bool(key) and re.search(rf"(?<![\w$]){re.escape(name)}(?!\w)", rest) is not None


def _fed_parts(karta: Karta, name: str) -> list[str]:
    fed: set[str] = set()
    for component in karta.components:
        status = set(_status_expressions(component))
        scale = component.scale_definition
        scales = {scale.replicas_path, scale.min_replicas_path, scale.max_replicas_path} if scale else set()
        for expression in _expressions(component):
            if _reads_reference(expression, name):
                fed.add(_STATUS if expression in status else _REPLICAS if expression in scales else _ROLES)
    return [part for part in (_ROLES, _REPLICAS, _STATUS) if part in fed]


def without_reference(karta: Karta, reference: ObjectReference) -> str:
    """What is missing from the workload's reading when `reference` is not at hand, derived from which parts of
    the definition read it: `its roles are not shown, only what the workload says` (a TrainJob's runtime gives
    its roles), `its status is read from the workload alone, without the Job's` (a MiniCluster's Job gives only
    status)."""
    parts = _fed_parts(karta, reference.name)
    if _ROLES in parts:
        return "its roles are not shown, only what the workload says"
    if not parts:
        return f"the workload is read without the {reference.kind}'s content"
    verb = "is" if parts == [_STATUS] else "are"
    return f"its {' and '.join(parts)} {verb} read from the workload alone, without the {reference.kind}'s"
