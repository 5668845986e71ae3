"""`wmap gang` on a terminal: each plan as a tree, gang → sub-groups → leaves, with what each requires.

    JobSet ml/train  (jobset-x-k8s-io-jobset-v1alpha2)
    gang train-jobset   requires 2 of 2 sub-groups · at least 3 pods · min nvidia.com/gpu 12
    ├── leader             1 of 1 sub-groups
    │   └── leader-replica-0   1 of 1 pods   replicatedjob leader
    └── worker             2 of 2 sub-groups
        ├── worker-replica-0   1 of 1 pods   replicatedjob worker
        └── worker-replica-1   1 of 1 pods   replicatedjob worker

Read from the plan's JSON form (`schemaVersion: workloadmap.io/gang/v2`), so plans from files and from a cluster
print alike; every field is made terminal-safe when written (`render.text.write_lines`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.cli.render.text import Line, align, seg

__all__ = ["plan_lines"]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pods(count: int) -> str:
    return f"{count} pod{'s' * (count != 1)}"


def _requirement(node: Mapping[str, Any], children: int) -> str:
    if "minSubGroup" in node:
        return f"{_count(node['minSubGroup'])} of {children} sub-groups"
    return f"{_count(node.get('minMember'))} of {_count(node.get('count'))} pods"


def _roles(node: Mapping[str, Any]) -> str:
    roles = node.get("roles") or []
    return ", ".join(
        " ".join(part for part in (str(role.get("component", "")), str(role.get("instance", ""))) if part)
        for role in roles
        if isinstance(role, Mapping)
    )


def _resources(gang: Mapping[str, Any]) -> str:
    found = gang.get("minResources") or {}
    return ", ".join(f"{name} {amount}" for name, amount in found.items() if name not in ("cpu", "memory"))


def _gang_lines(gang: Mapping[str, Any]) -> list[Line]:
    nodes = [node for node in gang.get("subGroups") or [] if isinstance(node, Mapping)]
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for node in nodes:
        children.setdefault(node.get("parent"), []).append(node)
    head = f"requires {_pods(_count(gang.get('minMember')))}"
    if nodes and gang.get("minSubGroup") is not None:
        top = len(children.get(None, []))
        at_least = _count(gang.get("minMember"))
        head = f"requires {_count(gang['minSubGroup'])} of {top} sub-groups · at least {_pods(at_least)}"
    resources = _resources(gang)
    if resources:
        head += f" · min {resources}"
    lines: list[Line] = [seg("gang ", "muted") + seg(str(gang.get("name", "")), "title") + seg("   " + head)]
    rows: list[list[Line]] = []

    def walk(parent: str | None, prefix: str) -> None:
        siblings = children.get(parent, [])
        for index, node in enumerate(siblings):
            last = index == len(siblings) - 1
            glyph = "└── " if last else "├── "
            name = str(node.get("name", ""))
            kids = children.get(name, [])
            notes: list[str] = []
            if node.get("deferred"):
                notes.append(f"deferred: {node['deferred']}")
            pods = node.get("pods") or []
            if pods:
                notes.append(f"{len(pods)} pod{'s' * (len(pods) != 1)} placed")
            rows.append(
                [
                    seg(prefix + glyph, "glyph") + seg(name, "accent"),
                    seg(_requirement(node, len(kids))),
                    seg(_roles(node), "muted"),
                    seg("; ".join(notes), "warn" if node.get("deferred") else "muted"),
                ]
            )
            walk(name, prefix + ("    " if last else "│   "))

    walk(None, "")
    lines.extend(align(rows))
    return lines


def plan_lines(documents: Sequence[Mapping[str, Any]]) -> list[Line]:
    """The lines of each plan: a heading per workload, then each gang's tree, its notes and unplaced pods."""
    lines: list[Line] = []
    for index, document in enumerate(documents):
        if index:
            lines.append([])
        workload = document.get("workload") or {}
        where = "/".join(str(part) for part in (workload.get("namespace"), workload.get("name")) if part)
        lines.append(
            seg(str(workload.get("kind", "")), "heading")
            + seg(f" {where}" if where else "")
            + seg(f"  ({document.get('definition', '')})", "muted")
        )
        if document.get("noGang"):
            lines.append(seg("no gang: ", "muted") + seg(str(document["noGang"])))
        for gang in document.get("gangs") or []:
            if isinstance(gang, Mapping):
                lines.extend(_gang_lines(gang))
        unplaced = [pod for pod in document.get("pods") or [] if isinstance(pod, Mapping) and pod.get("gang") is None]
        for pod in unplaced:
            lines.append(seg("unplaced ", "bad") + seg(str(pod.get("name", ""))) + seg(f": {pod.get('error', '')}"))
    return lines
