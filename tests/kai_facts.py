"""KAI Scheduler pod-grouper facts (tests/fixtures/kai) and a normalizer for our KAI export.

The fixtures state, per workload kind, what KAI's pod grouper makes of a workload and its pods: how many
PodGroups, each one's root minimum, its sub-group tree and which pods it holds, and the sub-group each pod is
labelled with. ``normalize_kai`` turns a list of ``scheduling.run.ai/v2alpha2`` PodGroup manifests (our export)
into the same shape, ignoring PodGroup names (KAI derives them from object UIDs), so a test can compare the two.
See docs/kai-facts.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

FIXTURE_DIR = Path(__file__).parent / "fixtures" / "kai"
KAI_REPOSITORY = "kai-scheduler/KAI-Scheduler"
KAI_COMMIT = "d5bc503a146317e51037d89775d77172c6d12f71"
KAI_VERSION = "v0.17.0-9-gd5bc503a"
PODGROUP_API_VERSION = "scheduling.run.ai/v2alpha2"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
PODGROUP_ANNOTATION = "pod-group-name"
VERIFIED_VALUES = frozenset({"oracle", "read"})


class FixtureError(ValueError):
    """A fixture file or an exported manifest does not have the expected shape."""


@dataclass(frozen=True)
class SubGroup:
    name: str
    parent: str | None
    min_member: int | None
    min_sub_group: int | None


@dataclass(frozen=True)
class PodGroupShape:
    """One PodGroup, without its name: root minimum, sub-groups (sorted by name) and member pods (sorted)."""

    min_member: int | None
    min_sub_group: int | None
    sub_groups: tuple[SubGroup, ...]
    pods: tuple[str, ...]


@dataclass(frozen=True)
class Source:
    file: str
    function: str


@dataclass(frozen=True)
class KaiCase:
    kind: str
    fixture: str
    name: str
    fact: str
    verified: str
    sources: tuple[Source, ...]
    workload: Mapping[str, Any]
    related: tuple[Mapping[str, Any], ...]
    pods: tuple[Mapping[str, Any], ...]
    pod_groups: tuple[PodGroupShape, ...]
    placement: Mapping[str, str | None]

    @property
    def id(self) -> str:
        return f"{self.fixture}:{self.name}"

    def pod_names(self) -> tuple[str, ...]:
        return tuple(_pod_name(p, self.id) for p in self.pods)


def _need(mapping: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in mapping:
        raise FixtureError(f"{where}: missing field {key!r}")
    value = mapping[key]
    if kind is int and isinstance(value, bool):
        raise FixtureError(f"{where}: field {key!r} must be {kind.__name__}, got bool")
    if not isinstance(value, kind):
        raise FixtureError(f"{where}: field {key!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def _opt_int(mapping: Mapping[str, Any], key: str, where: str) -> int | None:
    if mapping.get(key) is None:
        return None
    return int(_need(mapping, key, int, where))


def _pod_name(pod: Mapping[str, Any], where: str) -> str:
    metadata = _need(pod, "metadata", dict, f"{where}: pod")
    return str(_need(metadata, "name", str, f"{where}: pod metadata"))


def _sub_group(raw: Any, where: str) -> SubGroup:
    if not isinstance(raw, dict):
        raise FixtureError(f"{where}: a sub-group must be a mapping")
    name = str(_need(raw, "name", str, where))
    parent = raw.get("parent")
    if parent is not None and not isinstance(parent, str):
        raise FixtureError(f"{where}: sub-group {name!r} parent must be a string")
    return SubGroup(
        name=name,
        parent=parent,
        min_member=_opt_int(raw, "minMember", f"{where}: sub-group {name!r}"),
        min_sub_group=_opt_int(raw, "minSubGroup", f"{where}: sub-group {name!r}"),
    )


def _shape(
    min_member: int | None, min_sub_group: int | None, subs: Iterable[SubGroup], pods: Iterable[str]
) -> PodGroupShape:
    return PodGroupShape(
        min_member=min_member,
        min_sub_group=min_sub_group,
        sub_groups=tuple(sorted(subs, key=lambda s: s.name)),
        pods=tuple(sorted(pods)),
    )


def _expected_pod_group(raw: Any, where: str) -> PodGroupShape:
    if not isinstance(raw, dict):
        raise FixtureError(f"{where}: a podGroups entry must be a mapping")
    subs = [_sub_group(s, where) for s in _need(raw, "subGroups", list, where)]
    pods = _need(raw, "pods", list, where)
    if not all(isinstance(p, str) for p in pods):
        raise FixtureError(f"{where}: pods must be pod names")
    return _shape(_opt_int(raw, "minMember", where), _opt_int(raw, "minSubGroup", where), subs, pods)


def _case(raw: Any, kind: str, fixture: str) -> KaiCase:
    if not isinstance(raw, dict):
        raise FixtureError(f"{fixture}: a case must be a mapping")
    name = str(_need(raw, "name", str, fixture))
    where = f"{fixture}:{name}"
    expect = _need(raw, "expect", dict, where)
    placement = _need(expect, "placement", dict, where)
    for pod, sub in placement.items():
        if not isinstance(pod, str) or not (sub is None or isinstance(sub, str)):
            raise FixtureError(f"{where}: placement maps pod names to a sub-group name or null")
    sources = tuple(
        Source(str(_need(s, "file", str, where)), str(_need(s, "function", str, where)))
        for s in _need(raw, "source", list, where)
    )
    return KaiCase(
        kind=kind,
        fixture=fixture,
        name=name,
        fact=str(_need(raw, "fact", str, where)),
        verified=str(_need(raw, "verified", str, where)),
        sources=sources,
        workload=_need(raw, "object", dict, where),
        related=tuple(raw.get("related") or ()),
        pods=tuple(_need(raw, "pods", list, where)),
        pod_groups=tuple(_expected_pod_group(g, where) for g in _need(expect, "podGroups", list, where)),
        placement=dict(placement),
    )


def load_file(path: Path) -> list[KaiCase]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    where = path.name
    if not isinstance(doc, dict):
        raise FixtureError(f"{where}: top level must be a mapping")
    kai = _need(doc, "kai", dict, where)
    pinned = {"repository": KAI_REPOSITORY, "commit": KAI_COMMIT, "version": KAI_VERSION}
    if kai != pinned:
        raise FixtureError(f"{where}: kai must pin {pinned}, got {kai}")
    kind = str(_need(doc, "kind", str, where))
    return [_case(c, kind, where) for c in _need(doc, "cases", list, where)]


def load_cases(directory: Path = FIXTURE_DIR) -> list[KaiCase]:
    """Every case of every fixture file, in file-name order."""
    cases: list[KaiCase] = []
    for path in sorted(directory.glob("*.yaml")):
        cases.extend(load_file(path))
    return cases


@dataclass(frozen=True)
class KaiShape:
    """What KAI's grouper produces for a set of pods, in comparable form (no PodGroup names)."""

    pod_groups: tuple[PodGroupShape, ...]
    placement: Mapping[str, str | None]

    def structure(self) -> tuple[PodGroupShape, ...]:
        """The PodGroups without their member pods, for exports made from a spec with no pods."""
        return tuple(sorted((replace(g, pods=()) for g in self.pod_groups), key=_shape_key))


def normalize_kai(manifests: Iterable[Mapping[str, Any]]) -> KaiShape:
    """Our KAI export as a ``KaiShape``.

    ``manifests`` holds ``scheduling.run.ai/v2alpha2`` PodGroups and, when the export also writes the pods, the Pod
    objects: a pod belongs to the PodGroup named by its ``pod-group-name`` annotation and is placed in the
    sub-group named by its ``kai.scheduler/subgroup-name`` label, as KAI's pod grouper links them. Other kinds are
    ignored. A pod naming a PodGroup that is not in the list is an error.
    """
    groups: dict[str, tuple[Mapping[str, Any], list[SubGroup]]] = {}
    members: dict[str, list[str]] = {}
    placement: dict[str, str | None] = {}
    pods: list[Mapping[str, Any]] = []
    for manifest in manifests:
        kind = manifest.get("kind")
        if kind == "Pod":
            pods.append(manifest)
            continue
        if kind != "PodGroup":
            continue
        metadata = manifest.get("metadata") or {}
        name = str(metadata.get("name", ""))
        where = f"PodGroup {name or '?'}"
        if manifest.get("apiVersion") != PODGROUP_API_VERSION:
            raise FixtureError(f"{where}: apiVersion must be {PODGROUP_API_VERSION}")
        if name in groups:
            raise FixtureError(f"{where}: listed twice")
        spec = _need(manifest, "spec", dict, where)
        groups[name] = (spec, [_sub_group(s, where) for s in spec.get("subGroups") or ()])
        members[name] = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        pod_name = str(metadata.get("name", ""))
        group = (metadata.get("annotations") or {}).get(PODGROUP_ANNOTATION)
        if group is None:
            placement[pod_name] = None
            continue
        if group not in members:
            raise FixtureError(f"pod {pod_name}: {PODGROUP_ANNOTATION} names {group!r}, a PodGroup not exported")
        members[group].append(pod_name)
        placement[pod_name] = (metadata.get("labels") or {}).get(SUBGROUP_LABEL)
    shapes = [
        _shape(
            _opt_int(spec, "minMember", f"PodGroup {name}"),
            _opt_int(spec, "minSubGroup", f"PodGroup {name}"),
            subs,
            members[name],
        )
        for name, (spec, subs) in groups.items()
    ]
    return KaiShape(pod_groups=tuple(sorted(shapes, key=_shape_key)), placement=placement)


def expected_shape(case: KaiCase) -> KaiShape:
    """The case's ``expect`` as a ``KaiShape``, sorted the way ``normalize_kai`` sorts ours."""
    return KaiShape(pod_groups=tuple(sorted(case.pod_groups, key=_shape_key)), placement=dict(case.placement))


def placement_from_pods(pods: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
    """Pod name -> the kai.scheduler/subgroup-name label value (None if unlabelled), as KAI's placement."""
    out: dict[str, str | None] = {}
    for pod in pods:
        metadata = pod.get("metadata") or {}
        out[str(metadata.get("name"))] = (metadata.get("labels") or {}).get(SUBGROUP_LABEL)
    return out


def _shape_key(shape: PodGroupShape) -> tuple[tuple[str, ...], int, int, tuple[str, ...]]:
    return (
        shape.pods,
        -1 if shape.min_member is None else shape.min_member,
        -1 if shape.min_sub_group is None else shape.min_sub_group,
        tuple(s.name for s in shape.sub_groups),
    )
