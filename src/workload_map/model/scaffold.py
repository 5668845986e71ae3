"""A draft Karta definition from a CRD's OpenAPI schema (`wmap scaffold`, docs/scaffold.md).

The schema says where things are, not what the operator does with them, so the draft holds what the shape shows
and leaves a `# TODO:` where a person must decide:

* pod templates: objects of the PodTemplateSpec shape (`spec.containers`, an array of objects with `name` and
  `image`) or the PodSpec shape (`containers` directly); each is a component, multi-instance when the path to it
  crosses an array or a map (replica specs keyed by role, a list of tasks);
* replica fields: integer fields named like a count (`replicas`, `size`, `parallelism`, ...) in the objects between
  the template and its nearest enclosing array item (or the spec);
* the status: a conditions array (items with `type` and `status`) and a `phase`/`state` string, mapped to the
  common statuses from the usual names;
* suspend: a boolean `suspend` field in the spec (`spec.suspend`, `spec.runPolicy.suspend`).

Pure: takes the CRD as a parsed dict and returns text; validating the draft is the caller's (the CLI runs
`workload_map.validation` on it, a layer above this one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workload_map._regex import LazyPattern
from workload_map.errors import WorkloadMapError

# Bounds on a hostile schema: the walk stops descending past these (a real CRD is well under them).
_MAX_DEPTH = 64
_MAX_NODES = 200_000

# Integer fields that count pods or groups, in the order one is preferred as the replica count of a level.
_COUNT_FIELDS = ("replicas", "size", "numWorkers", "workers", "parallelism", "count", "numOfHosts")
_MIN_FIELDS = ("minReplicas",)
_MAX_FIELDS = ("maxReplicas",)
_GANG_FIELDS = ("minAvailable", "minMember")
_PHASE_FIELDS = ("phase", "state")

# Usual names of phases and condition types, lower-cased, by the common status each suggests.
_STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "initializing": ("pending", "initializing", "created", "creating", "starting", "queued", "inqueue", "waiting"),
    "running": ("running", "ready", "available"),
    "degraded": ("restarting", "degraded", "unhealthy"),
    "completed": ("succeeded", "completed", "complete", "finished", "done"),
    "failed": ("failed", "error", "aborted", "terminated"),
    "suspended": ("suspended",),
    "suspending": ("suspending", "aborting"),
}
# Condition types drafted when the schema does not list them (most CRDs do not).
_COMMON_CONDITIONS: dict[str, tuple[str, ...]] = {
    "running": ("Running",),
    "completed": ("Succeeded", "Completed", "Complete"),
    "failed": ("Failed",),
    "suspended": ("Suspended",),
}
# Title-cased phases drafted when a phase string has no enum.
_COMMON_PHASES: dict[str, tuple[str, ...]] = {
    "initializing": ("Pending",),
    "running": ("Running",),
    "completed": ("Succeeded", "Completed"),
    "failed": ("Failed",),
}
_STATUS_ORDER = ("initializing", "running", "degraded", "completed", "failed", "suspended", "suspending", "resuming")
_IDENTIFIER = LazyPattern(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAME_SUFFIXES = ("GroupSpecs", "GroupSpec", "PodTemplate", "Templates", "Template", "Specs", "Spec")
_UNPRINTABLE = LazyPattern(r"[^\x20-\x7e]")


class ScaffoldError(WorkloadMapError, ValueError):
    """A CRD a draft cannot be made from: not a CRD, no such kind or version, or no pod template in its schema."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Segment:
    """One step of a path into the object: a field, every item of an array, or every value of a map."""

    kind: Literal["field", "items", "values"]
    name: str = ""


@dataclass(frozen=True)
class ReplicaField:
    """An integer field near a pod template, and the default the schema gives it (None when it gives none)."""

    path: str
    name: str
    default: int | None


@dataclass(frozen=True)
class TemplateSite:
    """A pod template the schema holds, and what was found around it."""

    component: str
    shape: Literal["template", "podspec"]
    path: str  # the jq path of the template (or pod spec)
    instance_id_path: str | None  # set when the path crosses an array or a map
    counts: tuple[ReplicaField, ...]  # count fields, nearest level first
    minimum: ReplicaField | None
    maximum: ReplicaField | None
    gang_minimum: ReplicaField | None

    @property
    def replicas_path(self) -> str:
        return _scale_path(self, self.counts[0]) if self.counts else self._single()

    def _single(self) -> str:
        return "1" if self.instance_id_path is None else f"{self.instance_id_path} | 1"


@dataclass(frozen=True)
class Scaffold:
    """What the schema showed, and the draft definition made of it (`text`)."""

    crd: str
    group: str
    version: str
    kind: str
    templates: tuple[TemplateSite, ...]
    conditions_path: str | None
    condition_types: tuple[str, ...]  # from the schema's enum; empty when it lists none
    phase_path: str | None
    phases: tuple[str, ...]  # from the schema's enum
    suspend_path: str | None
    opaque_paths: tuple[str, ...]  # spec fields whose schema is not given (x-kubernetes-preserve-unknown-fields)
    text: str = field(repr=False)

    @property
    def todos(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.lstrip().startswith("# TODO:"))


def select_crd(documents: Sequence[Any], kind: str | None = None, source: str = "the file") -> Mapping[str, Any]:
    """The CustomResourceDefinition among `documents` (of kind `kind` when given; needed when there are several)."""
    crds = [d for d in documents if isinstance(d, Mapping) and d.get("kind") == "CustomResourceDefinition"]
    if not crds:
        raise ScaffoldError(f"{source} holds no CustomResourceDefinition")
    kinds = [_names(crd).get("kind") for crd in crds]
    if kind is not None:
        matching = [crd for crd, k in zip(crds, kinds, strict=True) if isinstance(k, str) and k.lower() == kind.lower()]
        if not matching:
            raise ScaffoldError(f"{source} has no CRD of kind {kind!r}", hint=f"its kinds: {_listing(kinds)}")
        return matching[0]
    if len(crds) > 1:
        raise ScaffoldError(
            f"{source} holds {len(crds)} CRDs: choose one with --kind", hint=f"its kinds: {_listing(kinds)}"
        )
    return crds[0]


def scaffold(crd: Mapping[str, Any], version: str | None = None) -> Scaffold:
    """A draft definition of `crd` at `version` (needed when the CRD serves several)."""
    spec = _mapping(crd.get("spec"))
    group, kind = spec.get("group"), _names(crd).get("kind")
    name = _mapping(crd.get("metadata")).get("name") or f"{kind}"
    if not isinstance(group, str) or not group or not isinstance(kind, str) or not kind:
        raise ScaffoldError(f"CRD {_safe(name)!r} has no spec.group or spec.names.kind")
    chosen = _version(spec, version, str(name))
    schema = _mapping(_mapping(chosen.get("schema")).get("openAPIV3Schema"))
    properties = _mapping(schema.get("properties"))
    walker = _Walker()
    spec_schema = _mapping(properties.get("spec"))
    sites = walker.templates(spec_schema, [Segment("field", "spec")])
    if not sites:
        opaque = walker.opaque
        hint = (
            f"these fields keep unknown fields, so their shape is not in the schema: {_listing(opaque)}"
            if opaque
            else "a pod template is an object with spec.containers (name, image), a pod spec one with containers"
        )
        raise ScaffoldError(
            f"no pod template found in the schema of {_safe(name)} {_safe(chosen.get('name'))}: "
            "write its components by hand (docs/scaffold.md)",
            hint=hint,
        )
    status_schema = _mapping(properties.get("status"))
    conditions = _find_conditions(status_schema, [Segment("field", "status")])
    phase = _find_phase(status_schema, [Segment("field", "status")])
    suspend = _find_suspend(spec_schema, [Segment("field", "spec")])
    draft = _Draft(
        crd=str(name),
        group=group,
        version=str(chosen.get("name")),
        kind=kind,
        templates=tuple(sites),
        conditions=conditions,
        phase=phase,
        suspend=suspend,
        opaque=tuple(walker.opaque),
    )
    return Scaffold(
        crd=draft.crd,
        group=group,
        version=draft.version,
        kind=kind,
        templates=draft.templates,
        conditions_path=conditions[0] if conditions else None,
        condition_types=conditions[1] if conditions else (),
        phase_path=phase[0] if phase else None,
        phases=phase[1] if phase else (),
        suspend_path=suspend,
        opaque_paths=draft.opaque,
        text=draft.render(),
    )


# --- the schema walk -------------------------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _names(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_mapping(crd.get("spec")).get("names"))


def _version(spec: Mapping[str, Any], wanted: str | None, name: str) -> Mapping[str, Any]:
    versions = [v for v in spec.get("versions") or () if isinstance(v, Mapping) and isinstance(v.get("name"), str)]
    if not versions:
        raise ScaffoldError(f"CRD {_safe(name)!r} lists no versions")
    names = [str(v["name"]) for v in versions]
    if wanted is not None:
        for candidate in versions:
            if candidate["name"] == wanted:
                return candidate
        raise ScaffoldError(f"CRD {_safe(name)!r} has no version {wanted!r}", hint=f"its versions: {_listing(names)}")
    served = [v for v in versions if v.get("served", True)]
    if len(served) == 1:
        return served[0]
    raise ScaffoldError(
        f"CRD {_safe(name)!r} serves {len(served)} versions: choose one with --version",
        hint=f"its versions: {_listing([str(v['name']) for v in served] or names)}",
    )


def _is_container_list(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") != "array":
        return False
    item = _mapping(_mapping(schema.get("items")).get("properties"))
    return "name" in item and "image" in item


def _shape(schema: Mapping[str, Any]) -> Literal["template", "podspec"] | None:
    properties = _mapping(schema.get("properties"))
    if _is_container_list(_mapping(properties.get("containers"))):
        return "podspec"
    inner = _mapping(_mapping(properties.get("spec")).get("properties"))
    if _is_container_list(_mapping(inner.get("containers"))):
        return "template"
    return None


class _Walker:
    """Finds the pod templates under the spec, in schema order, without descending into one."""

    def __init__(self) -> None:
        self.nodes = 0
        self.opaque: list[str] = []
        self._names: set[str] = set()

    def templates(self, schema: Mapping[str, Any], at: list[Segment]) -> list[TemplateSite]:
        found: list[TemplateSite] = []
        self._walk(schema, at, [schema], found)
        return found

    def _walk(
        self, schema: Mapping[str, Any], at: list[Segment], levels: list[Mapping[str, Any]], found: list[TemplateSite]
    ) -> None:
        self.nodes += 1
        if self.nodes > _MAX_NODES or len(at) > _MAX_DEPTH:
            return
        shape = _shape(schema)
        if shape is not None and len(at) > 1:
            found.append(self._site(shape, at, levels))
            return
        if schema.get("x-kubernetes-preserve-unknown-fields") is True and not schema.get("properties"):
            self.opaque.append(_render(at))
        for key, child in _mapping(schema.get("properties")).items():
            if isinstance(child, Mapping) and isinstance(key, str):
                self._walk(child, [*at, Segment("field", key)], [*levels, child], found)
        items = schema.get("items")
        if schema.get("type") == "array" and isinstance(items, Mapping):
            self._walk(items, [*at, Segment("items")], [*levels, items], found)
        values = schema.get("additionalProperties")
        if schema.get("type") == "object" and isinstance(values, Mapping):
            self._walk(values, [*at, Segment("values")], [*levels, values], found)

    def _site(
        self, shape: Literal["template", "podspec"], at: list[Segment], levels: list[Mapping[str, Any]]
    ) -> TemplateSite:
        last = max((i for i, s in enumerate(at) if s.kind != "field"), default=-1)
        scope = at[: last + 1]
        counts: list[ReplicaField] = []
        extra: dict[str, ReplicaField] = {}
        # The objects between the scope (the array item, or the spec) and the template, nearest first.
        for depth in range(len(at) - 1, max(last, 0) - 1, -1):
            properties = _mapping(levels[depth].get("properties"))
            relative = [s.name for s in at[last + 1 : depth + 1]]
            for name in (*_COUNT_FIELDS, *_MIN_FIELDS, *_MAX_FIELDS, *_GANG_FIELDS):
                prop = _mapping(properties.get(name))
                if prop.get("type") != "integer":
                    continue
                default = prop.get("default")
                found = ReplicaField(
                    _field_path(scope, [*relative, name]), name, default if isinstance(default, int) else None
                )
                if name in _COUNT_FIELDS:
                    counts.append(found)
                else:
                    extra.setdefault(name, found)
        instance = _instance_id(scope, levels[last]) if last >= 0 else None
        return TemplateSite(
            component=self._component_name(at),
            shape=shape,
            path=_field_path(scope, [s.name for s in at[last + 1 :]]),
            instance_id_path=instance,
            counts=tuple(counts),
            minimum=next((extra[n] for n in _MIN_FIELDS if n in extra), None),
            maximum=next((extra[n] for n in _MAX_FIELDS if n in extra), None),
            gang_minimum=next((extra[n] for n in _GANG_FIELDS if n in extra), None),
        )

    def _component_name(self, at: list[Segment]) -> str:
        words = [s.name for s in at if s.kind == "field" and s.name not in ("spec", "template", "podSpec")]
        base = words[-1] if words else "pod"
        for suffix in _NAME_SUFFIXES:
            if base.endswith(suffix) and len(base) > len(suffix):
                base = base[: -len(suffix)]
                break
        base = re.sub(r"[^a-z0-9-]", "", base.lower()) or "pod"
        name, n = base, 2
        while name in self._names:
            name, n = f"{base}-{n}", n + 1
        self._names.add(name)
        return name


def _instance_id(scope: list[Segment], item: Mapping[str, Any]) -> str:
    head = _render(scope[:-1])
    if scope[-1].kind == "values":
        return f"{head} // {{}} | to_entries[] | .key"
    properties = _mapping(item.get("properties"))
    strings = [k for k, v in properties.items() if isinstance(k, str) and _mapping(v).get("type") == "string"]
    # The item's own name when it has one (`name`, else a `...Name` such as RayCluster's `groupName`).
    named = next((k for k in ("name", *sorted(strings)) if k in strings and k.lower().endswith("name")), None)
    if named is not None:
        return f"{head}[]? | {_step(named) if _step(named).startswith('.') else '.' + _step(named)}"
    return f"{head} // [] | keys[] | tostring"


def _find_conditions(schema: Mapping[str, Any], at: list[Segment]) -> tuple[str, tuple[str, ...]] | None:
    for path, child in _fields(schema, at, depth=3):
        if child.get("type") != "array":
            continue
        item = _mapping(_mapping(child.get("items")).get("properties"))
        if "type" in item and "status" in item:
            enum = _mapping(item.get("type")).get("enum") or ()
            return _render(path), tuple(str(v) for v in enum if isinstance(v, str))
    return None


def _find_phase(schema: Mapping[str, Any], at: list[Segment]) -> tuple[str, tuple[str, ...]] | None:
    for path, child in _fields(schema, at, depth=2):
        if path[-1].name in _PHASE_FIELDS and child.get("type") == "string":
            enum = child.get("enum") or ()
            return _render(path), tuple(str(v) for v in enum if isinstance(v, str))
    return None


def _find_suspend(schema: Mapping[str, Any], at: list[Segment]) -> str | None:
    for path, child in _fields(schema, at, depth=3):
        if path[-1].name == "suspend" and child.get("type") == "boolean":
            return _render(path)
    return None


def _fields(
    schema: Mapping[str, Any], at: list[Segment], depth: int
) -> Iterator[tuple[list[Segment], Mapping[str, Any]]]:
    """Object fields breadth first (shallowest first), not inside arrays or pod templates."""
    level = [(at, schema)]
    for _ in range(depth):
        deeper: list[tuple[list[Segment], Mapping[str, Any]]] = []
        for path, node in level:
            for key, child in _mapping(node.get("properties")).items():
                if isinstance(key, str) and isinstance(child, Mapping):
                    here = [*path, Segment("field", key)]
                    yield here, child
                    if _shape(child) is None:
                        deeper.append((here, child))
        level = deeper


# --- jq paths --------------------------------------------------------------------------------------------------


def _step(name: str) -> str:
    return f".{name}" if _IDENTIFIER.match(name) else f"[{json.dumps(name)}]"


def _render(segments: Sequence[Segment]) -> str:
    out = ""
    for segment in segments:
        if segment.kind == "field":
            step = _step(segment.name)
            out += step if step.startswith(".") or out else f".{step}"
        elif segment.kind == "items":
            out += "[]?"
        else:
            out += " // {} | to_entries[] | .value"
    return out or "."


def _field_path(scope: list[Segment], fields: Sequence[str]) -> str:
    """The path of `fields` below `scope`; piped after an iteration so each instance gives exactly one output."""
    tail = "".join(_step(f) for f in fields)
    if not scope or all(s.kind == "field" for s in scope):
        return _render([*scope, *(Segment("field", f) for f in fields)])
    return f"{_render(scope)} | {tail if tail.startswith('.') else '.' + tail}" if tail else _render(scope)


def _scale_path(site: TemplateSite, count: ReplicaField) -> str:
    default = 1 if count.default is None else count.default
    return _with_default(count.path, default)


def _with_default(path: str, default: int) -> str:
    head, sep, tail = path.rpartition(" | ")
    return f"{head}{sep}{tail} // {default}" if sep else f"{path} // {default}"


# --- the draft -------------------------------------------------------------------------------------------------


def _safe(value: object) -> str:
    """A schema-supplied name as one printable line (it goes into comments and messages)."""
    return _UNPRINTABLE.sub("?", str(value))[:200]


def _listing(values: Sequence[object]) -> str:
    return ", ".join(_safe(v) for v in values) or "(none)"


def _q(text: str) -> str:
    """A YAML scalar that reads back as `text` exactly (single-quoted; JSON's double quotes when it has breaks)."""
    if _UNPRINTABLE.search(text):
        return json.dumps(text)
    return "'" + text.replace("'", "''") + "'"


def _status_of(word: str) -> str | None:
    lowered = word.lower()
    return next((status for status, words in _STATUS_WORDS.items() if lowered in words), None)


@dataclass
class _Draft:
    crd: str
    group: str
    version: str
    kind: str
    templates: tuple[TemplateSite, ...]
    conditions: tuple[str, tuple[str, ...]] | None
    phase: tuple[str, tuple[str, ...]] | None
    suspend: str | None
    opaque: tuple[str, ...]
    lines: list[str] = field(default_factory=list)

    def add(self, indent: int, text: str) -> None:
        self.lines.append(" " * indent + text)

    def todo(self, indent: int, text: str) -> None:
        self.add(indent, f"# TODO: {text}")

    @property
    def root(self) -> str:
        name = re.sub(r"[^a-z0-9-]", "", self.kind.lower()) or "workload"
        return name if all(site.component != name for site in self.templates) else f"{name}-root"

    def render(self) -> str:
        name = re.sub(r"[^a-z0-9.-]", "-", f"{self.group}-{self.kind}-{self.version}".lower()).replace(".", "-")
        self.add(0, f"# A draft from the schema of CRD {_safe(self.crd)} ({self.version}), made by `wmap scaffold`.")
        self.add(0, "# Check every TODO against the operator's code, then `wmap validate` it --against a real object.")
        self.add(0, "apiVersion: run.ai/v1alpha1")
        self.add(0, "kind: Karta")
        self.add(0, "metadata:")
        self.add(2, f"name: {_q(name)}")
        self.add(2, "annotations:")
        self.todo(4, "one line on what the workload is, and the API types and controller code this follows.")
        self.add(4, f"workloadmap.io/description: {_q(f'{self.kind} ({self.group}): drafted from its CRD schema.')}")
        self.add(4, f"workloadmap.io/sources: {_q(f'CRD {_safe(self.crd)} {self.version} (openAPIV3Schema)')}")
        self.add(0, "spec:")
        self.add(2, "structureDefinition:")
        self.add(4, "rootComponent:")
        self.add(6, f"name: {_q(self.root)}")
        self.add(6, f"kind: {{group: {_q(self.group)}, version: {_q(self.version)}, kind: {_q(self.kind)}}}")
        self._status(6)
        self._suspend(6)
        self.add(4, "childComponents:")
        for site in self.templates:
            self._component(4, site)
        self._gang(2)
        return "\n".join(self.lines) + "\n"

    def _status(self, indent: int) -> None:
        self.add(indent, "statusDefinition:")
        if self.conditions:
            self.add(indent + 2, "conditionsDefinition:")
            self.add(indent + 4, f"path: {_q(self.conditions[0])}")
        if self.phase:
            self.add(indent + 2, "phaseDefinition:")
            self.add(indent + 4, f"path: {_q(self.phase[0])}")
        mappings = self._mappings()
        if not mappings:
            self.todo(indent + 2, "the schema shows no conditions array and no phase: map the statuses by expression.")
            self.add(indent + 2, "statusMappings: {}")
            return
        self.add(indent + 2, "statusMappings:")
        for status in _STATUS_ORDER:
            if status not in mappings:
                continue
            notes, matchers = mappings[status]
            for note in notes:
                self.todo(indent + 4, note)
            self.add(indent + 4, f"{status}:")
            for line in matchers:
                self.add(indent + 4, line)

    def _mappings(self) -> dict[str, tuple[list[str], list[str]]]:
        """Matchers by status: (the TODOs above them, their YAML lines)."""
        out: dict[str, tuple[list[str], list[str]]] = {}

        def add(status: str, note: str, lines: list[str]) -> None:
            notes, matchers = out.setdefault(status, ([], []))
            if note:
                notes.append(note)
            matchers.extend(lines)

        by_phase = self.phase is not None and (bool(self.phase[1]) or not self.conditions)
        if self.phase is not None and by_phase:
            names = self.phase[1]
            grouped: dict[str, list[str]] = {}
            if names:
                for value in names:
                    status = _status_of(value)
                    if status:
                        grouped.setdefault(status, []).append(value)
                unmapped = [v for v in names if _status_of(v) is None]
                note = f"phases {_listing(unmapped)} are not mapped: map them or leave them out." if unmapped else ""
            else:
                grouped = {k: list(v) for k, v in _COMMON_PHASES.items()}
                note = "the schema lists no phases: these are the usual names; check which the operator writes."
            for i, status in enumerate(s for s in _STATUS_ORDER if s in grouped):
                lines = [f"- byPhase: {_q(value)}" for value in grouped[status]]
                add(status, note if i == 0 else "", lines)
        elif self.conditions is not None:
            types = self.conditions[1]
            conditions: dict[str, list[str]] = {}
            if types:
                for value in types:
                    status = _status_of(value)
                    if status:
                        conditions.setdefault(status, []).append(value)
                note = "the condition types come from the schema's enum: check which mean what for this operator."
            else:
                conditions = {k: list(v) for k, v in _COMMON_CONDITIONS.items()}
                note = "the schema lists no condition types: these are the usual ones; keep those the operator sets."
            for i, status in enumerate(s for s in _STATUS_ORDER if s in conditions):
                lines = [f"- byConditions: [{{type: {_q(value)}, status: 'True'}}]" for value in conditions[status]]
                add(status, note if i == 0 else "", lines)
        if self.suspend:
            expression = f"{self.suspend} == true"
            lines = ["- byExpression:", f"    expression: {_q(expression)}", "    expectedResult: 'true'"]
            note = "suspended is read from the spec: prefer the condition or phase the operator writes once stopped."
            add("suspended", note, lines)
        return out

    def _suspend(self, indent: int) -> None:
        if not self.suspend:
            return
        self.add(indent, "suspendDefinition:")
        self.add(indent + 2, "suspendActions:")
        self.add(indent + 2, f"- {{path: {_q(self.suspend)}, value: 'true'}}")
        self.add(indent + 2, "resumeActions:")
        self.add(indent + 2, f"- {{path: {_q(self.suspend)}, value: 'false'}}")

    def _component(self, indent: int, site: TemplateSite) -> None:
        self.add(indent, f"- name: {_q(site.component)}")
        inner = indent + 2
        self.add(inner, f"ownerRef: {_q(self.root)}")
        self.todo(inner, "the kind of object the operator creates here (a Pod, or a Job, a StatefulSet...).")
        self.add(inner, "kind: {group: '', version: v1, kind: Pod}")
        if site.instance_id_path:
            self.add(inner, "# One instance per entry; the id pairs with the outputs of the paths below.")
            self.add(inner, f"instanceIdPath: {_q(site.instance_id_path)}")
        self.add(inner, "specDefinition:")
        key = "podTemplateSpecPath" if site.shape == "template" else "podSpecPath"
        self.add(inner + 2, f"{key}: {_q(site.path)}")
        self.add(inner, "scaleDefinition:")
        if not site.counts:
            self.todo(inner + 2, "no count field near this template: one pod is assumed.")
        else:
            first = site.counts[0]
            if first.default is None:
                self.todo(inner + 2, f"{first.name} has no default in the schema: 1 is assumed when it is unset.")
            if len(site.counts) > 1:
                others = ", ".join(c.path for c in site.counts[1:])
                self.todo(inner + 2, f"also counts: {_safe(others)}; pods may be their product.")
        self.add(inner + 2, f"replicasPath: {_q(site.replicas_path)}")
        if site.minimum:
            self.add(inner + 2, f"minReplicasPath: {_q(site.minimum.path)}")
        if site.maximum:
            self.add(inner + 2, f"maxReplicasPath: {_q(site.maximum.path)}")
        self.add(inner, "podSelector:")
        self.todo(inner + 2, "the label the operator sets on this component's pods (read its controller code).")
        self.add(inner + 2, "componentTypeSelector:")
        label = f"{self.group}/TODO-{site.component}-label"
        self.add(inner + 4, f"keyPath: {_q(f'.metadata.labels[{json.dumps(label)}]')}")
        if site.instance_id_path:
            self.todo(inner + 2, "the label holding the instance id (the value instanceIdPath gives).")
            self.add(inner + 2, "componentInstanceSelector:")
            self.add(inner + 4, f"idPath: {_q(f'.metadata.labels[{json.dumps(label)}]')}")

    def _gang(self, indent: int) -> None:
        self.add(indent, "optimizationInstructions:")
        self.add(indent + 2, "gangScheduling:")
        self.todo(
            indent + 4,
            "whether these pods start together; the gang's minimum goes in workloadmap.io/gang (docs/gang.md).",
        )
        gang = [s.gang_minimum.path for s in self.templates if s.gang_minimum]
        if gang:
            self.add(indent + 4, f"# The schema has gang minimums: {_safe(', '.join(gang))}.")
        self.add(indent + 4, "podGroup:")
        self.add(indent + 6, f"name: {_q(self.root)}")
        self.add(indent + 6, "subGroups:")
        for site in self.templates:
            self.add(indent + 6, f"- componentName: {_q(site.component)}")
