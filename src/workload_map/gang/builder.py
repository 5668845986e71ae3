"""What both plan formats build gangs from: the per-plan `Builder` (role counts per gang, and each role's pod
template and requests, read once), the roles of a gang and their minimum resources, and a pod's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.gang.errors import GangError
from workload_map.gang.keys import Keying
from workload_map.gang.names import join_name
from workload_map.gang.scale import Role, desired_replicas, eff_min, role_counts
from workload_map.gang.summary import StructureSummary
from workload_map.gang.types import GangRole
from workload_map.pods import (
    QuantityError,
    ResourceList,
    ResourceSpecError,
    add,
    fragmented_requests,
    pod_requests,
    scale,
)
from workload_map.resolve import ExtractionError, Workload

__all__ = ["Builder", "add_counts", "make_roles", "min_resources_of", "pod_identity"]


class Builder:
    """Everything computed once per plan: role counts per slot, templates and requests per role."""

    def __init__(self, workload: Workload, summary: StructureSummary) -> None:
        self.workload = workload
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
                scales = self.workload.component(ancestor).scales
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
        for pick in (eff_min, desired_replicas):
            counts = role_counts(
                self.workload, self.summary, name, instance_id=instance, pick=pick, one_replica=one_replica
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

    def _read_role(self, name: str, instance: str) -> tuple[dict[str, Any] | None, ResourceList | None]:
        component = self.workload.component(name)
        if not component.has_pod_definition:
            return None, None
        where = f"component {name}" + (f" instance {instance}" if instance else "")
        try:
            template = _template(component, instance)
        except ExtractionError as error:
            self.note(f"{where}: no pod template ({error.message}); its requests are not counted")
            return None, None
        if template is None:
            self.note(f"{where}: the spec has no pod template for this instance; its requests are not counted")
            return None, None
        try:
            fragments = component.fragmented_pod_specs
            if fragments is not None and instance in fragments and component.pod_template_specs is None:
                requests = fragmented_requests(fragments[instance].to_dict())
            else:
                spec = template.get("spec")
                requests = pod_requests(spec if isinstance(spec, Mapping) else {})
        except (QuantityError, ResourceSpecError, ExtractionError) as error:
            self.note(f"{where}: cannot read resource requests ({error}); they are not counted")
            return template, None
        return template, requests


def _template(component: Any, instance: str) -> dict[str, Any] | None:
    """The pod template of one instance: the spec's PodTemplateSpec, or {metadata, spec} from podSpecPath +
    metadataPath, or one built from a fragmented spec."""
    templates = component.pod_template_specs
    if templates is not None:
        found = templates.get(instance)
        return dict(found) if isinstance(found, dict) else None
    specs = component.pod_specs
    if specs is not None:
        spec = specs.get(instance)
        if spec is None:
            return None
        metadata = (component.pod_metadata or {}).get(instance) or {}
        return {"metadata": metadata, "spec": spec}
    fragments = component.fragmented_pod_specs
    if fragments is not None and instance in fragments:
        return _template_from_fragments(fragments[instance].to_dict())
    return None


def _template_from_fragments(fragment: Mapping[str, Any]) -> dict[str, Any]:
    containers = [dict(container) for container in fragment.get("containers") or () if isinstance(container, dict)]
    single = fragment.get("container")
    if isinstance(single, dict):
        containers.append(dict(single))
    if not containers:
        container: dict[str, Any] = {"name": "main"}
        if fragment.get("image"):
            container["image"] = fragment["image"]
        containers.append(container)
    if fragment.get("resources") and not any(container.get("resources") for container in containers):
        containers[0]["resources"] = fragment["resources"]
    if fragment.get("image") and not containers[0].get("image"):
        containers[0]["image"] = fragment["image"]
    spec: dict[str, Any] = {"containers": containers}
    for key in ("schedulerName", "priorityClassName", "resourceClaims"):
        if fragment.get(key):
            spec[key] = fragment[key]
    affinity = {key: fragment[key] for key in ("podAffinity", "nodeAffinity") if fragment.get(key)}
    if affinity:
        spec["affinity"] = affinity
    metadata = {key: fragment[key] for key in ("labels", "annotations") if fragment.get(key)}
    return {"metadata": metadata, "spec": spec}


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
