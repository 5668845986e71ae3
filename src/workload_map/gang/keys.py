"""Keying: what splits one pod-group member's pods into several gangs (one per instance, one per replica).

`keying_of()` reads it from the member's group-key paths and the pod selectors of the definition; paths compare in one
spelling (`canonical_path`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from workload_map._regex import LazyPattern
from workload_map.gang.summary import StructureSummary
from workload_map.model import PodGroupMember, ReplicaSelector

__all__ = ["Keying", "canonical_path", "keying_of"]

_STEP: Final = LazyPattern(
    r"""\.(?P<field>[A-Za-z_][A-Za-z0-9_]*) | \.?"(?P<q>(?:[^"\\]|\\.)*)" | \.?\[\s*"(?P<key>(?:[^"\\]|\\.)*)"\s*\]
        | \.?\[\s*(?P<index>-?[0-9]+)\s*\]""",
    re.VERBOSE,
)


def canonical_path(expr: str) -> str:
    """A jq path in one spelling (`.metadata.labels.app` == `.metadata.labels["app"]`), for comparing paths; any
    other expression compares by its text without whitespace."""
    text = expr.strip()
    steps: list[str] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None:
            return "".join(text.split())
        position = match.end()
        if match.group("index") is not None:
            steps.append(f"[{int(match.group('index'))}]")
        else:
            steps.append(repr(match.group("field") or match.group("q") or match.group("key") or ""))
    return "".join(steps) if steps else "".join(text.split())


@dataclass(frozen=True, slots=True)
class Keying:
    """How one member's pods split into gangs."""

    pod_group: str
    member: PodGroupMember
    instance_key: int | None  # index of the member's instance id among the group keys (a gang per instance)
    replica_component: str | None  # the component counted one replica per gang (a gang per replica)
    replica_key: int | None  # index of the replica index among the group keys (None: read from the selector)
    replica_selector: ReplicaSelector | None


def keying_of(summary: StructureSummary, pod_group: str, member: PodGroupMember) -> Keying:
    name = member.component_name
    paths = [canonical_path(path) for path in member.group_by_key_paths or ()]
    definition = summary.definitions[name]
    selector = definition.pod_selector
    instance_key: int | None = None
    if definition.instance_id_path and selector is not None and selector.component_instance_selector is not None:
        id_path = canonical_path(selector.component_instance_selector.id_path)
        if id_path in paths:
            instance_key = paths.index(id_path)
    replica_component: str | None = None
    replica_key: int | None = None
    replica_selector: ReplicaSelector | None = None
    for candidate in [name, *summary.ancestors(name), *summary.descendants(name)]:
        candidate_selector = summary.definitions[candidate].pod_selector
        found = candidate_selector.replica_selector if candidate_selector is not None else None
        if found is None or not found.key_path:
            continue
        key_path = canonical_path(found.key_path)
        if key_path in paths:
            replica_component, replica_key, replica_selector = candidate, paths.index(key_path), found
            break
        if candidate == name:  # the member itself is replicated: one gang per replica even without the key
            replica_component, replica_selector = candidate, found
            break
    return Keying(pod_group, member, instance_key, replica_component, replica_key, replica_selector)
