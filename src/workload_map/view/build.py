"""`build_view`: a workload, its pods and its definition rolled up into one `WorkloadView` (docs/view.md).

Counting rules:

* **Desired replicas** of an instance: `resolve.replicas.desired_replicas` (`replicas`, else `minReplicas`, else
  1; a missing scale gives 1).
* A child component's replicas count **per replica of its parent**: its total is its own scale times the parent's
  total (an LWS of 2 groups with 1 leader and 3 workers per group is 2 leaders and 6 workers). A parent that
  declares no scale passes its own multiplier down.
* **Requests** come from the spec: the per-replica request (pod template, else pod spec, else fragmented spec)
  times the desired replicas, summed up the tree, so a missing pod does not change the totals. A component that
  declares no pod spec but claims live pods counts those pods' requests.
* **Live counts**: `current` is the number of pods attributed, `ready` those with `Ready=True`; both are None in
  file mode (`pods=None`).
* A node's figures cover its subtree; a grouping component adds nothing of its own (its scale is already in its
  children), so nothing is counted twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from workload_map.errors import ArgumentTypeError
from workload_map.model import UNDEFINED
from workload_map.resolve import Resolution, ResolvedComponent, ResolvedInstance, Scale
from workload_map.resolve.replicas import desired_replicas
from workload_map.resources import QuantityError, ResourceList, ResourceSpecError, add, pod_requests, scale, total
from workload_map.view.podstatus import pod_node, pod_phase, pod_ready, pod_reason
from workload_map.view.types import ComponentView, PodView, Replicas, Resources, WorkloadView

if TYPE_CHECKING:
    from workload_map.pods.attribution import AttributedPod, Attribution

__all__ = ["build_view"]


class _Totals(msgspec.Struct):
    desired: int
    current: int | None
    ready: int | None
    requests: ResourceList
    nodes: set[str]


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


class _Builder:
    def __init__(self, resolution: Resolution, attribution: Attribution | None, gpu_names: tuple[str, ...]) -> None:
        self.resolution = resolution
        self.gpu_names = gpu_names
        self.file_mode = attribution is None
        self._resources: dict[tuple[tuple[str, int, int], ...], Resources] = {}
        self.claimed: dict[tuple[str, str], list[AttributedPod]] = {}
        self.unclaimed: list[AttributedPod] = []
        if attribution is not None:
            for pod in attribution.pods:
                if pod.claimed:
                    assert pod.component is not None and pod.instance is not None
                    self.claimed.setdefault((pod.component, pod.instance), []).append(pod)
                else:
                    self.unclaimed.append(pod)

    # --- resources ----------------------------------------------------------------------------------------------

    def resources(self, requests: ResourceList) -> Resources:
        # pods of one template ask the same: build their figures once (keyed by integers: hashing a Fraction is slow)
        key = tuple((name, amount.numerator, amount.denominator) for name, amount in requests.items())
        found = self._resources.get(key)
        if found is None:
            found = self._resources[key] = Resources.of(requests, self.gpu_names)
        return found

    @staticmethod
    def per_replica(instance: ResolvedInstance | None) -> ResourceList:
        """The request of one replica of an instance (none when it cannot be read: the resolution says why)."""
        requests = instance.requests if instance is not None else None
        return requests if requests is not None else {}

    # --- pods ---------------------------------------------------------------------------------------------------

    def pod_view(self, attributed: AttributedPod, *, unclaimed: bool = False) -> PodView:
        pod = attributed.pod
        errors = list(attributed.errors)
        spec = pod.get("spec")
        requests: ResourceList = {}
        try:
            requests = pod_requests(spec if isinstance(spec, (dict, Mapping)) else {})
        except (QuantityError, ResourceSpecError) as error:
            errors.append(f"cannot count the pod's requests: {error}")
        ready = pod_ready(pod)
        metadata = pod.get("metadata")
        namespace = metadata.get("namespace") if isinstance(metadata, (dict, Mapping)) else None
        return PodView(
            name=attributed.name,
            phase=pod_phase(pod),
            ready=ready,
            node=pod_node(pod),
            reason=pod_reason(pod, ready),
            resources=self.resources(requests),
            namespace=namespace if isinstance(namespace, str) else "",
            replica=attributed.replica,
            component=attributed.component if unclaimed else None,
            errors=tuple(errors),
        )

    def pods_of(self, component: str, instance: str) -> list[PodView]:
        members = sorted(self.claimed.get((component, instance), ()), key=lambda pod: pod.name)
        return [self.pod_view(pod) for pod in members]

    # --- the tree -----------------------------------------------------------------------------------------------

    def declares_scale(self, component: str) -> bool:
        return self.resolution.components[component].definition.scale_definition is not None

    def child_names(self, resolved: ResolvedComponent, visiting: frozenset[str]) -> list[str]:
        return [
            name
            for name in resolved.children
            if name in self.resolution.components and name not in visiting and name != resolved.name
        ]

    def component(
        self, name: str, multiplier: int, visiting: frozenset[str], *, hoist_children: bool = False
    ) -> ComponentView | None:
        """The node of a component (None when it is plumbing); `multiplier` is its parent's total replicas."""
        resolved = self.resolution.components[name]
        visiting = visiting | {name}
        children = [] if hoist_children else self.child_names(resolved, visiting)
        if not resolved.multi_instance:
            return self.instance_node(resolved, "", multiplier, children, visiting, instance_label=None)
        keys = sorted(resolved.instances)
        nodes: list[ComponentView] = []
        for key in keys:
            node = self.instance_node(
                resolved, key, multiplier, children if len(keys) == 1 else [], visiting, instance_label=key
            )
            if node is not None:
                nodes.append(node)
        if len(keys) != 1 and children:
            if self.declares_scale(name):
                below = sum(resolved.instances[key].desired_replicas for key in keys) * multiplier
            else:
                below = multiplier
            nodes.extend(node for node in (self.component(child, below, visiting) for child in children) if node)
        if not nodes and not resolved.errors:
            return None  # no instances in this object (a feature it does not use) and no pods
        own = _Totals(0, self.zero(), self.zero(), {}, set())
        return self.assemble(resolved, instance=None, scale_=None, pods=[], own=own, children=nodes)

    def zero(self) -> int | None:
        return None if self.file_mode else 0

    def instance_node(
        self,
        resolved: ResolvedComponent,
        key: str,
        multiplier: int,
        children: Sequence[str],
        visiting: frozenset[str],
        *,
        instance_label: str | None,
    ) -> ComponentView | None:
        extracted = resolved.instances.get(key)
        scale_ = extracted.scale if extracted is not None else None
        per = desired_replicas(scale_)  # no instance (its ids failed): one replica, as without a scale
        declared = self.declares_scale(resolved.name)
        pods = self.pods_of(resolved.name, key)
        if resolved.has_pod_definition:
            own_desired = per * multiplier
            own_requests = scale(self.per_replica(extracted), own_desired)
            below = own_desired if declared else multiplier
        else:
            own_desired = 0
            own_requests = total(pod.resources.requests for pod in pods)
            below = per * multiplier if declared else multiplier
        child_nodes = [node for node in (self.component(child, below, visiting) for child in children) if node]
        if not resolved.has_pod_definition and not child_nodes:
            own_desired = per * multiplier if declared else len(pods)
        own = _Totals(
            own_desired,
            None if self.file_mode else len(pods),
            None if self.file_mode else sum(1 for pod in pods if pod.ready),
            own_requests,
            {pod.node for pod in pods if pod.node},
        )
        if (
            not resolved.has_pod_definition
            and not pods
            and not child_nodes
            and own_desired == 0
            and not any(own_requests.values())
            and not resolved.errors
        ):
            return None  # plumbing: declares nothing this workload runs
        return self.assemble(resolved, instance=instance_label, scale_=scale_, pods=pods, own=own, children=child_nodes)

    def assemble(
        self,
        resolved: ResolvedComponent,
        *,
        instance: str | None,
        scale_: Scale | None,
        pods: list[PodView],
        own: _Totals,
        children: list[ComponentView],
    ) -> ComponentView:
        desired, current, ready = own.desired, own.current, own.ready
        own_resources = self.resources(own.requests)
        requests = dict(own.requests)
        nodes = set(own.nodes)
        for child in children:
            desired += child.replicas.desired
            current = _plus(current, child.replicas.current)
            ready = _plus(ready, child.replicas.ready)
            requests = add(requests, child.resources.requests)
            nodes.update(child.nodes)
        return ComponentView(
            name=instance if instance is not None else resolved.name,
            component=resolved.name,
            kind=resolved.kind,
            instance=instance,
            pod_bearing=resolved.has_pod_definition,
            scale=scale_,
            replicas=Replicas(desired, current, ready),
            resources=self.resources(requests) if children else own_resources,
            own_replicas=Replicas(own.desired, own.current, own.ready),
            own_resources=own_resources,
            nodes=tuple(sorted(nodes)),
            pods=tuple(pods),
            children=tuple(children),
        )

    def top_level(self) -> list[ComponentView]:
        """A pod-bearing root (or one that claimed pods) first, then the root's children."""
        root = self.resolution.components[self.resolution.root]
        nodes: list[ComponentView] = []
        multiplier = 1
        if root.has_pod_definition or any(component == root.name for component, _ in self.claimed):
            node = self.component(root.name, 1, frozenset(), hoist_children=True)
            if node is not None:
                nodes.append(node)
                if self.declares_scale(root.name):
                    multiplier = node.own_replicas.desired
        elif self.declares_scale(root.name):
            multiplier = sum(instance.desired_replicas for instance in root.instances.values())
        visiting = frozenset({root.name})
        for child in self.child_names(root, visiting):
            node = self.component(child, multiplier, visiting)
            if node is not None:
                nodes.append(node)
        return nodes


def _phases(resolution: Resolution) -> tuple[str, tuple[str, ...]]:
    status = resolution.status
    if status is None:
        return UNDEFINED, (UNDEFINED,)
    phases = [status.phase, *(phase for phase in status.phases if phase != status.phase)]
    return status.phase, tuple(phases)


def build_view(
    resolution: Resolution,
    attribution: Attribution | None = None,
    *,
    origin: str = "",
    definition_name: str | None = None,
    gpu_resource_names: Iterable[str] = (),
) -> WorkloadView:
    """The rolled-up view of a resolved workload.

    Without `attribution` it is file mode: structure, desired scale and requests from the spec; live fields are
    None. With the `Attribution` of its pods (`workload_map.pods.attribute(resolution, pods, owners)`, or one of
    `attribute_many`'s), the live counts, nodes and pods. `origin` says where the definition came from (`catalog`,
    `cluster`, `file`); `definition_name` defaults to the definition's name; `gpu_resource_names` are extra extended
    resources that count as whole GPUs. Nothing raises for a half-broken object: failures are in `errors`.
    """
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    if attribution is not None and not _is_attribution(attribution):
        raise ArgumentTypeError("attribution", "an Attribution (workload_map.pods.attribute) or None", attribution)
    given: object = gpu_resource_names
    names: tuple[str, ...] = tuple(given) if isinstance(given, Iterable) and not isinstance(given, str) else ()
    if not isinstance(given, Iterable) or isinstance(given, str) or not all(isinstance(n, str) for n in names):
        raise ArgumentTypeError("gpu_resource_names", "an iterable of resource names (str)", gpu_resource_names)
    builder = _Builder(resolution, attribution, names)
    components = builder.top_level()
    desired, current, ready = 0, builder.zero(), builder.zero()
    requests: ResourceList = {}
    for component in components:
        desired += component.replicas.desired
        current = _plus(current, component.replicas.current)
        ready = _plus(ready, component.replicas.ready)
        requests = add(requests, component.resources.requests)
    phase, phases = _phases(resolution)
    ref = resolution.object
    return WorkloadView(
        name=ref.name,
        namespace=ref.namespace,
        kind=ref.kind,
        api_version=ref.api_version,
        definition=definition_name if definition_name is not None else resolution.definition,
        origin=origin,
        phase=phase,
        phases=phases,
        file_mode=attribution is None,
        replicas=Replicas(desired, current, ready),
        resources=builder.resources(requests),
        components=tuple(components),
        unclaimed_pods=tuple(
            builder.pod_view(pod, unclaimed=True) for pod in sorted(builder.unclaimed, key=lambda pod: pod.name)
        ),
        errors=resolution.errors,
        uid=ref.uid,
        created_at=ref.creation_timestamp or None,
        reason=resolution.status.reason if resolution.status is not None else None,
        reason_source=resolution.status.reason_source if resolution.status is not None else None,
    )


def _is_attribution(value: object) -> bool:
    # imported here: a view of a file's workload (no pods) never loads the pods layer (issue 19: start-up)
    from workload_map.pods.attribution import Attribution

    return isinstance(value, Attribution)
