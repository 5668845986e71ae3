"""What both plan formats build gangs from: the per-plan `Builder` (role counts per gang, and each role's pod
template and requests, read once), the roles of a gang and their minimum resources, and a pod's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.gang.errors import GangError
from workload_map.gang.keys import Keying
from workload_map.gang.names import join_name
from workload_map.gang.scale import Role, role_counts
from workload_map.gang.summary import StructureSummary
from workload_map.gang.types import GangRole
from workload_map.model.extensions import RESOURCE_ALIASES, is_valid_resource_name
from workload_map.resolve import ExtractionError, Resolution
from workload_map.resolve.replicas import desired_replicas, min_replicas
from workload_map.resources import ResourceList, add, scale

__all__ = ["Builder", "add_counts", "make_roles", "min_resources_of", "pod_identity"]


class Builder:
    """Everything computed once per plan: role counts per slot, templates and requests per role."""

    def __init__(self, resolution: Resolution, summary: StructureSummary) -> None:
        self.resolution = resolution
        self.summary = summary
        self.notes: list[str] = []
        self._roles: dict[Role, tuple[dict[str, Any] | None, ResourceList | None]] = {}
        self._counts: dict[tuple[str, str, str | None, str | None], tuple[dict[Role, int], dict[Role, int]]] = {}

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # -- counts

    def ancestor_factor(self, name: str, one_replica: str | None, pick: Any) -> int:
        """Replicas of the member's ancestors (each child counts per one replica of its parent); the ancestor a gang
        is keyed on by replica counts 1."""
        if not self.summary.has_scale_definition:
            return 1
        factor = 1
        for ancestor in self.summary.ancestors(name):
            if ancestor == one_replica:
                continue
            try:
                scales = self.resolution.component(ancestor).require_scales()
            except ExtractionError as error:
                raise GangError(f"failed to get scale of component {ancestor}: {error.message}") from error
            own = sum(pick(value) for value in (scales or {}).values())
            factor *= own if own > 0 else 1
        return factor

    def counts(self, keying: Keying, instance: str | None) -> tuple[dict[Role, int], dict[Role, int]]:
        """(min counts, desired counts) per role for one gang of this member (the replicas of a gang share them)."""
        key = (keying.pod_group, keying.member.component_name, keying.replica_component, instance)
        found = self._counts.get(key)
        if found is None:
            found = self._compute_counts(keying, instance)
            self._counts[key] = found
        return found

    def _compute_counts(self, keying: Keying, instance: str | None) -> tuple[dict[Role, int], dict[Role, int]]:
        name = keying.member.component_name
        one = keying.replica_component
        in_subtree = one is not None and (one == name or one in self.summary.descendants(name))
        one_replica = (one,) if in_subtree and one is not None else ()
        results: list[dict[Role, int]] = []
        for pick in (min_replicas, desired_replicas):
            counts = role_counts(
                self.resolution, self.summary, name, instance_id=instance, pick=pick, one_replica=one_replica
            )
            factor = self.ancestor_factor(name, one, pick)
            results.append({role: count * factor for role, count in counts.items()})
        return results[0], results[1]

    # -- roles

    def role(self, role: Role) -> tuple[dict[str, Any] | None, ResourceList | None]:
        """(pod template, one pod's requests) of a role, read once."""
        found = self._roles.get(role)
        if found is None:
            found = self._read_role(*role)
            self._roles[role] = found
        return found

    def _read_role(self, name: str, instance_id: str) -> tuple[dict[str, Any] | None, ResourceList | None]:
        component = self.resolution.component(name)
        if not component.has_pod_definition:
            return None, None
        where = f"component {name}" + (f" instance {instance_id}" if instance_id else "")
        failure = component.pod_definition_error
        if failure is not None:
            self.note(f"{where}: no pod template ({failure.message}); its requests are not counted")
            return None, None
        instance = component.instance(instance_id)
        template = instance.pod_template if instance is not None else None
        if instance is None or template is None:
            self.note(f"{where}: the spec has no pod template for this instance; its requests are not counted")
            return None, None
        requests = instance.requests
        error = instance.requests_error
        if error is not None:
            self.note(f"{where}: {error.message}; they are not counted")
        invalid = sorted(name for name in requests or () if not is_valid_resource_name(name))
        if invalid:
            self.note(
                f"{where}: requests {', '.join(invalid)}, not a valid Kubernetes resource name (no node offers it; "
                f"a framework's own key is mapped with the definition's {RESOURCE_ALIASES} annotation)"
            )
        return dict(template), requests


def _role_name(component: str, instance: str) -> str:
    return join_name([component, instance]) or "main"


def make_roles(builder: Builder, minimum: Mapping[Role, int], desired: Mapping[Role, int]) -> tuple[GangRole, ...]:
    roles: list[GangRole] = []
    used: set[str] = set()
    for role in dict.fromkeys([*minimum, *desired]):
        min_count, count = minimum.get(role, 0), desired.get(role, 0)
        if min_count == 0 and count == 0:
            continue
        template, requests = builder.role(role)
        name = _role_name(*role)
        while name in used:
            name = join_name([name, "x"])
        used.add(name)
        roles.append(GangRole(name, role[0], role[1], min_count, max(count, min_count), requests, template))
    return tuple(roles)


def min_resources_of(roles: Iterable[GangRole]) -> ResourceList:
    total: ResourceList = {}
    for role in roles:
        if role.requests is not None and role.min_count:
            total = add(total, scale(role.requests, role.min_count))
    return {name: amount for name, amount in total.items() if amount}


def add_counts(target: dict[Role, int], counts: Mapping[Role, int]) -> None:
    for role, count in counts.items():
        target[role] = target.get(role, 0) + count


def pod_identity(pod: Mapping[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return (name if isinstance(name, str) else ""), (namespace if isinstance(namespace, str) else "")
