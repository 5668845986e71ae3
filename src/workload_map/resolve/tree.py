"""The structural tree of a workload (karta-spec §12.3): components, their instances sorted by key, and the child
components under each instance, with the extracted data and scale.

It is plain and typed; the view layer adds pods, readiness and resource totals on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workload_map.model import GVK
from workload_map.resolve.resolution import Resolution, ResolvedInstance
from workload_map.resolve.results import ComponentError, ObjectRef, Scale, WorkloadStatus, gvk_dict


@dataclass(frozen=True, slots=True)
class InstanceNode:
    """One instance of a component. `key` is None for the single instance of a component without instanceIdPath.

    Child subtrees are not scoped by parent instance (spec paths are whole-object paths), so every instance of a
    component carries the same child nodes.
    """

    key: str | None
    scale: Scale | None
    extracted: ResolvedInstance | None
    children: tuple[ComponentNode, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "instanceKey": self.key,
            "scale": self.scale.to_dict() if self.scale is not None else None,
            "extracted": self.extracted.to_dict() if self.extracted is not None else None,
            "children": [child.to_dict() for child in self.children],
        }


@dataclass(frozen=True, slots=True)
class ComponentNode:
    """A component and its instances (at least one: logical and non-pod components too)."""

    name: str
    kind: GVK | None
    has_pod_definition: bool
    multi_instance: bool
    instances: tuple[InstanceNode, ...]
    errors: tuple[ComponentError, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": gvk_dict(self.kind),
            "hasPodDefinition": self.has_pod_definition,
            "multiInstance": self.multi_instance,
            "instances": [instance.to_dict() for instance in self.instances],
            "errors": [error.to_dict() for error in self.errors],
        }


@dataclass(frozen=True, slots=True)
class WorkloadTree:
    """The whole tree. `root` is the root component's node; `children` are its first instance's children, the
    part a front end shows under the workload's own line."""

    definition: str
    object: ObjectRef
    status: WorkloadStatus | None
    root: ComponentNode
    errors: tuple[ComponentError, ...] = ()

    @property
    def children(self) -> tuple[ComponentNode, ...]:
        return self.root.instances[0].children if self.root.instances else ()

    @property
    def phases(self) -> tuple[str, ...]:
        return self.status.phases if self.status is not None else ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "definition": self.definition,
            "object": self.object.to_dict(),
            "status": self.status.to_dict() if self.status is not None else None,
            "root": self.root.to_dict(),
            "errors": [error.to_dict() for error in self.errors],
        }


def build_tree(resolution: Resolution) -> WorkloadTree:
    """The tree of a resolution; failed parts are carried as errors on their node."""
    built: dict[str, ComponentNode] = {}

    def node(name: str, visiting: frozenset[str]) -> ComponentNode:
        if name in built:
            return built[name]
        component = resolution.components[name]
        children = tuple(
            node(child, visiting | {name})
            for child in component.children
            if child in resolution.components and child not in visiting and child != name
        )
        keys = sorted(component.instances) if component.instances else [""]
        instances = tuple(
            InstanceNode(
                key=key or None,
                scale=component.instances[key].scale if key in component.instances else None,
                extracted=component.instances.get(key),
                children=children,
            )
            for key in keys
        )
        result = ComponentNode(
            name=component.name,
            kind=component.kind,
            has_pod_definition=component.has_pod_definition,
            multi_instance=component.multi_instance,
            instances=instances,
            errors=component.errors,
        )
        built[name] = result
        return result

    return WorkloadTree(
        definition=resolution.definition,
        object=resolution.object,
        status=resolution.status,
        root=node(resolution.root, frozenset()),
        errors=resolution.errors,
    )
