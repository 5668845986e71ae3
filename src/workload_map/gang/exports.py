"""The gang plan written for a scheduler: KAI, Volcano, scheduler-plugins coscheduling, Kueue, the Workload API.

    from workload_map.gang import plan, export

    manifests = export(plan(workload), "kai", queue="team-a")     # a list of Kubernetes objects (dicts)

| format | objects | API version |
|---|---|---|
| `kai` | one `PodGroup` per gang | `scheduling.run.ai/v2alpha2` |
| `volcano` | one `PodGroup` per gang | `scheduling.volcano.sh/v1beta1` |
| `coscheduling` | one `PodGroup` per gang | `scheduling.x-k8s.io/v1alpha1` |
| `kueue` | one `Workload` per gang (its `podSets`) | `kueue.x-k8s.io/v1beta1` |
| `workload` | one `Workload`, plus one `PodGroup` per gang (v1alpha2) | `scheduling.k8s.io/v1alpha2` or `v1alpha1` |

Field names and rules come from each project's published API types (sources in docs/gang.md). `pod_join()` gives
the labels / annotations / fields a pod needs to join its gang in each format.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

from workload_map.errors import ArgumentTypeError
from workload_map.gang.errors import ExportError
from workload_map.gang.names import join_name
from workload_map.gang.types import Gang, GangPlan, GangRole, SubGroupPlan, Topology, format_resources

__all__ = [
    "COSCHEDULING_API_VERSION",
    "COSCHEDULING_POD_GROUP_LABEL",
    "FORMATS",
    "KAI_API_VERSION",
    "KAI_POD_GROUP_ANNOTATION",
    "KAI_QUEUE_LABEL",
    "KAI_SUBGROUP_LABEL",
    "KUEUE_API_VERSION",
    "KUEUE_MAX_POD_SETS",
    "KUEUE_QUEUE_LABEL",
    "VOLCANO_API_VERSION",
    "VOLCANO_GROUP_ANNOTATION",
    "VOLCANO_MIN_MEMBER_ANNOTATION",
    "VOLCANO_REPLICA_LABEL",
    "VOLCANO_SUB_GROUP_LABEL",
    "VOLCANO_TASK_ANNOTATION",
    "WORKLOAD_API_VERSIONS",
    "ExportFormat",
    "export",
    "joined_pod",
    "kueue_pod_sets",
    "min_member_of",
    "pod_join",
    "to_coscheduling",
    "to_kai",
    "to_kueue",
    "to_volcano",
    "to_workload_api",
]

ExportFormat = Literal["kai", "volcano", "coscheduling", "kueue", "workload"]
FORMATS: Final[tuple[str, ...]] = get_args(ExportFormat)

KAI_API_VERSION: Final = "scheduling.run.ai/v2alpha2"
KAI_POD_GROUP_ANNOTATION: Final = "pod-group-name"
KAI_SUBGROUP_LABEL: Final = "kai.scheduler/subgroup-name"
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
VOLCANO_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
VOLCANO_GROUP_ANNOTATION: Final = "scheduling.k8s.io/group-name"
VOLCANO_TASK_ANNOTATION: Final = "volcano.sh/task-spec"
VOLCANO_MIN_MEMBER_ANNOTATION: Final = "scheduling.volcano.sh/group-min-member"
VOLCANO_SUB_GROUP_LABEL: Final = "workloadmap.io/sub-group"
VOLCANO_REPLICA_LABEL: Final = "workloadmap.io/replica"
COSCHEDULING_API_VERSION: Final = "scheduling.x-k8s.io/v1alpha1"
COSCHEDULING_POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
KUEUE_API_VERSION: Final = "kueue.x-k8s.io/v1beta1"
KUEUE_QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
KUEUE_MAX_POD_SETS: Final = 8
WORKLOAD_API_VERSIONS: Final = ("scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha1")
WORKLOAD_MAX_POD_GROUPS: Final = 8


# --- shared ------------------------------------------------------------------------------------------------------


def _need_plan(plan: object) -> None:
    if not isinstance(plan, GangPlan):
        raise ArgumentTypeError("the plan", "a GangPlan (workload_map.gang.plan)", plan)


def _metadata(plan: GangPlan, name: str, *, owner: bool = True) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if plan.workload.namespace:
        metadata["namespace"] = plan.workload.namespace
    metadata["labels"] = {"app.kubernetes.io/managed-by": "workload-map"}
    if plan.workload.name:
        metadata["labels"]["workloadmap.io/workload"] = join_name([plan.workload.name]) or "workload"
    if owner and plan.uid and plan.workload.name and plan.workload.kind and plan.workload.api_version:
        metadata["ownerReferences"] = [
            {
                "apiVersion": plan.workload.api_version,
                "kind": plan.workload.kind,
                "name": plan.workload.name,
                "uid": plan.uid,
            }
        ]
    return metadata


def _kai_topology(topology: Topology) -> dict[str, Any]:
    out: dict[str, Any] = {"topology": topology.topology}
    if topology.required_level:
        out["requiredTopologyLevel"] = topology.required_level
    if topology.preferred_level:
        out["preferredTopologyLevel"] = topology.preferred_level
    return out


def min_member_of(manifest: Mapping[str, Any]) -> int:
    """The minimum number of pods an exported object asks for, whatever its format: `spec.minMember` of a
    PodGroup (KAI with `minSubGroup`: the fewest pods that meet the tree, each parent's cheapest `minSubGroup`
    children), the sum of `minCount` (else `count`) over a Kueue Workload's podSets, `gang.minCount` of a
    Workload-API PodGroup."""
    if not isinstance(manifest, Mapping):
        raise ArgumentTypeError("the manifest", "a mapping (an exported object)", manifest)
    spec = manifest.get("spec") or {}
    kind, api_version = manifest.get("kind"), str(manifest.get("apiVersion", ""))
    if kind == "PodGroup" and api_version.startswith("scheduling.k8s.io/"):
        return int(spec["schedulingPolicy"]["gang"]["minCount"])
    if kind == "PodGroup":
        if "minMember" in spec:
            return int(spec["minMember"])
        return _kai_tree_minimum(spec.get("subGroups") or [], int(spec.get("minSubGroup", 0)))
    if kind == "Workload" and api_version.startswith("kueue.x-k8s.io/"):
        return sum(int(pod_set.get("minCount", pod_set.get("count", 0))) for pod_set in spec.get("podSets") or [])
    raise ExportError(f"{api_version} {kind} has no single min member (a Workload API Workload holds templates)")


def _kai_tree_minimum(groups: list[dict[str, Any]], root_required: int) -> int:
    children: dict[str | None, list[dict[str, Any]]] = {}
    for group in groups:
        children.setdefault(group.get("parent"), []).append(group)

    def cost(group: dict[str, Any]) -> int:
        if "minSubGroup" not in group:
            return int(group.get("minMember", 0))
        return cheapest(children.get(group["name"], []), int(group["minSubGroup"]))

    def cheapest(nodes: list[dict[str, Any]], required: int) -> int:
        return sum(sorted(cost(node) for node in nodes)[:required])

    return cheapest(children.get(None, []), root_required)


# --- KAI -----------------------------------------------------------------------------------------------------------


def _existing_sub_groups(gang: Gang) -> list[SubGroupPlan]:
    """The sub-groups KAI is told about: a deferred one (and what is under it) is not, until its pods exist (as
    KAI's LWS grouper leaves the workers out while the leader waits)."""
    left_out: set[str] = set()
    present: list[SubGroupPlan] = []
    for group in gang.sub_groups:  # parents come before their children
        if group.deferred is not None or (group.parent is not None and group.parent in left_out):
            left_out.add(group.name)
            continue
        present.append(group)
    return present


def _kai_sub_group(group: SubGroupPlan) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": group.name}
    if group.parent is not None:
        entry["parent"] = group.parent
    if group.min_sub_group is not None:
        entry["minSubGroup"] = group.min_sub_group
    else:
        entry["minMember"] = group.min_member or 0
    if group.topology is not None:
        entry["topologyConstraint"] = _kai_topology(group.topology)
    return entry


def solo_pod_group_name(pod: str) -> str:
    """The KAI PodGroup of a pod whose workload needs no gang (a Deployment's replica): named after the pod."""
    return join_name([pod]) or "pod"


def to_kai(plan: GangPlan, *, queue: str | None = None, priority_class: str | None = None) -> list[dict[str, Any]]:
    """One KAI `scheduling.run.ai/v2alpha2` PodGroup per gang, with the gang's tree as `spec.subGroups`; for a
    workload that needs no gang, one PodGroup of `minMember: 1` per given pod (KAI schedules every pod through one).

    Leaves carry `minMember`, parents `minSubGroup` (KAI allows one or the other on a sub-group), and a sub-group
    names its `parent`. The root asks for `spec.minSubGroup` (the top-level sub-groups required) or, when the plan
    requires pods at the root, `spec.minMember` (the two are exclusive; 0 is KAI's "no gang requirement", which its
    CRD allows). Pods join with the `pod-group-name` annotation and
    their leaf's `kai.scheduler/subgroup-name` label (`pod_join`).
    """
    _need_plan(plan)
    manifests = []
    if plan.no_gang is not None:  # KAI schedules every pod through a PodGroup: each pod gets one of its own
        for pod in plan.pods:
            solo: dict[str, Any] = {"minMember": 1}
            if queue:
                solo["queue"] = queue
            if priority_class:
                solo["priorityClassName"] = priority_class
            metadata = _metadata(plan, solo_pod_group_name(pod.name))
            manifests.append({"apiVersion": KAI_API_VERSION, "kind": "PodGroup", "metadata": metadata, "spec": solo})
        return manifests
    for gang in plan.gangs:
        spec: dict[str, Any] = {}
        if gang.sub_groups and gang.min_sub_group is not None:
            spec["minSubGroup"] = gang.min_sub_group
        else:  # 0 is KAI's "no gang requirement" (its CRD allows it since the scale-to-zero change)
            spec["minMember"] = gang.min_member
        if queue:
            spec["queue"] = queue
        if priority_class:
            spec["priorityClassName"] = priority_class
        if gang.topology is not None:
            spec["topologyConstraint"] = _kai_topology(gang.topology)
        present = _existing_sub_groups(gang)
        if present:
            spec["subGroups"] = [_kai_sub_group(group) for group in present]
        manifests.append(
            {"apiVersion": KAI_API_VERSION, "kind": "PodGroup", "metadata": _metadata(plan, gang.name), "spec": spec}
        )
    return manifests


# --- Volcano -------------------------------------------------------------------------------------------------------


def _tasks(gang: Gang) -> dict[str, int]:
    """Volcano task name -> min pods: the leaves of a gang with sub-groups (a pod's task is its leaf), else the
    roles. A leaf is a task only when the whole path above it is required (each parent requires every child): a
    minimum per task cannot say "any k of these"."""
    if not gang.sub_groups:
        return {role.name: role.min_count for role in gang.roles if role.min_count > 0}
    groups = {group.name: group for group in gang.sub_groups}
    children: dict[str | None, int] = {}
    for group in gang.sub_groups:
        children[group.parent] = children.get(group.parent, 0) + 1

    def all_required(name: str | None) -> bool:
        if name is None:
            return gang.min_sub_group is None or gang.min_sub_group >= children.get(None, 0)
        group = groups[name]
        required = group.min_sub_group is None or group.min_sub_group >= children.get(name, 0)
        return required and all_required(group.parent)

    return {
        group.name: group.min_member
        for group in gang.sub_groups
        if group.min_sub_group is None and group.min_member and group.deferred is None and all_required(group.parent)
    }


def _volcano_sub_group_policy(gang: Gang) -> list[dict[str, Any]]:
    """The gang's tree as Volcano's `subGroupPolicy` (Volcano >= 1.14): an entry per top-level node, its pods
    selected by the `workloadmap.io/sub-group` label; a node with a leaf per replica is one entry whose sub-groups
    are told apart by the `workloadmap.io/replica` label (`subGroupSize` = one leaf's minimum, `minSubGroups` = the
    leaves required). A deeper tree is refused: the policy has two levels."""
    present = _existing_sub_groups(gang)
    children: dict[str | None, list[SubGroupPlan]] = {}
    for group in present:
        children.setdefault(group.parent, []).append(group)
    policy: list[dict[str, Any]] = []
    for top in children.get(None, []):
        below = children.get(top.name, [])
        if any(children.get(child.name) for child in below) or any(child.replica is None for child in below):
            raise ExportError(
                f"gang {gang.name}: sub-group {top.name} nests deeper than Volcano's subGroupPolicy (a group of "
                "equal replicas) can say; export without --volcano-sub-groups (minTaskMember)"
            )
        entry: dict[str, Any] = {"name": top.name}
        if below:
            sizes = {child.min_member or 0 for child in below}
            if len(sizes) != 1:
                raise ExportError(f"gang {gang.name}: the replicas of {top.name} differ in size (subGroupPolicy: one)")
            entry["subGroupSize"] = max(sizes.pop(), 1)
            entry["minSubGroups"] = top.min_sub_group or 0
            entry["matchLabelKeys"] = [VOLCANO_REPLICA_LABEL]
        else:
            entry["subGroupSize"] = max(top.min_member or 0, 1)
            entry["minSubGroups"] = 1 if top.min_member else 0
        entry["labelSelector"] = {"matchLabels": {VOLCANO_SUB_GROUP_LABEL: top.name}}
        policy.append(entry)
    return policy


def _volcano_min_member(plan: GangPlan) -> int | None:
    """The workload's `scheduling.volcano.sh/group-min-member` (Volcano's own override for the PodGroup it makes
    of a controller's pods), or None."""
    text = plan.scheduler_annotations.get(VOLCANO_MIN_MEMBER_ANNOTATION)
    if text is None:
        return None
    if not text.isdigit() or len(text) > 9:
        raise ExportError(
            f"{plan.workload.name}: annotation {VOLCANO_MIN_MEMBER_ANNOTATION} is {text[:40]!r}, not a count"
        )
    return int(text)


def to_volcano(
    plan: GangPlan, *, queue: str | None = None, priority_class: str | None = None, sub_groups: bool = False
) -> list[dict[str, Any]]:
    """One Volcano `scheduling.volcano.sh/v1beta1` PodGroup per gang: `minMember`, `minResources`, `queue`,
    `priorityClassName`, and the gang's roles or leaves as `minTaskMember` (task name -> min pods; a pod's task is
    its `volcano.sh/task-spec` annotation) or, with `sub_groups` (Volcano >= 1.14), its tree as `subGroupPolicy`
    (never both: Volcano advises against combining them; pods join through labels, see `pod_join`). The workload's
    `scheduling.volcano.sh/group-min-member` annotation, Volcano's own knob, sets `minMember` as Volcano would."""
    _need_plan(plan)
    override = _volcano_min_member(plan)
    manifests = []
    for gang in plan.gangs:
        spec: dict[str, Any] = {"minMember": gang.min_member if override is None else override}
        if sub_groups and gang.sub_groups:
            spec["subGroupPolicy"] = _volcano_sub_group_policy(gang)
        else:
            tasks = _tasks(gang)
            if tasks:
                spec["minTaskMember"] = tasks
        resources = format_resources(gang.min_resources)
        if resources:
            spec["minResources"] = resources
        if queue:
            spec["queue"] = queue
        if priority_class:
            spec["priorityClassName"] = priority_class
        manifests.append(
            {
                "apiVersion": VOLCANO_API_VERSION,
                "kind": "PodGroup",
                "metadata": _metadata(plan, gang.name),
                "spec": spec,
            }
        )
    return manifests


# --- scheduler-plugins coscheduling ---------------------------------------------------------------------------


def to_coscheduling(plan: GangPlan, *, schedule_timeout_seconds: int | None = None) -> list[dict[str, Any]]:
    """One scheduler-plugins `scheduling.x-k8s.io/v1alpha1` PodGroup per gang: `minMember`, `minResources`,
    `scheduleTimeoutSeconds`. Pods join with the label `scheduling.x-k8s.io/pod-group: <name>`. The API has no queue
    or priority."""
    _need_plan(plan)
    manifests = []
    for gang in plan.gangs:
        spec: dict[str, Any] = {"minMember": gang.min_member}
        resources = format_resources(gang.min_resources)
        if resources:
            spec["minResources"] = resources
        if schedule_timeout_seconds is not None:
            spec["scheduleTimeoutSeconds"] = schedule_timeout_seconds
        manifests.append(
            {
                "apiVersion": COSCHEDULING_API_VERSION,
                "kind": "PodGroup",
                "metadata": _metadata(plan, gang.name),
                "spec": spec,
            }
        )
    return manifests


# --- Kueue ---------------------------------------------------------------------------------------------------------


def _kueue_template(role: GangRole, priority_class: str | None) -> dict[str, Any]:
    source: dict[str, Any] = role.template or {}
    found = source.get("metadata")
    metadata_in: dict[str, Any] = found if isinstance(found, dict) else {}
    metadata = {
        key: copy.deepcopy(metadata_in[key])
        for key in ("labels", "annotations")
        if isinstance(metadata_in.get(key), dict)
    }
    spec_in = source.get("spec")
    spec: dict[str, Any] = copy.deepcopy(spec_in) if isinstance(spec_in, dict) else {}
    if not spec.get("containers"):
        spec["containers"] = [{"name": "main"}]
    if priority_class:
        spec["priorityClassName"] = priority_class
    template: dict[str, Any] = {"spec": spec}
    if metadata:
        template = {"metadata": metadata, "spec": spec}
    return template


def _kueue_topology(topology: Topology) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if topology.required_level:
        out["required"] = topology.required_level
    if topology.preferred_level:
        out["preferred"] = topology.preferred_level
    return out


def kueue_pod_sets(gang: Gang, *, priority_class: str | None = None) -> list[dict[str, Any]]:
    """The gang as Kueue PodSets: one per role, `count` = the pods asked for, `minCount` = the minimum when it is
    smaller (partial admission; Kueue allows it on one PodSet, so only the first such role gets it), `template` =
    the role's pod template (metadata reduced to labels and annotations, as Kueue requires)."""
    if not isinstance(gang, Gang):
        raise ArgumentTypeError("gang", "a Gang (an item of GangPlan.gangs)", gang)
    roles = [role for role in gang.roles if role.count > 0]
    if len(roles) > KUEUE_MAX_POD_SETS:
        raise ExportError(
            f"gang {gang.name} has {len(roles)} roles but a Kueue Workload holds at most {KUEUE_MAX_POD_SETS} podSets"
        )
    topology_of = {group.component: group.topology for group in gang.sub_groups if group.topology is not None}
    pod_sets: list[dict[str, Any]] = []
    partial_used = False
    for role in roles:
        pod_set: dict[str, Any] = {"name": role.name, "count": role.count}
        if role.min_count < role.count and role.min_count >= 1 and not partial_used:
            pod_set["minCount"] = role.min_count
            partial_used = True
        pod_set["template"] = _kueue_template(role, priority_class)
        topology = topology_of.get(role.component) or gang.topology
        if topology is not None and (topology.required_level or topology.preferred_level):
            pod_set["topologyRequest"] = _kueue_topology(topology)
        pod_sets.append(pod_set)
    return pod_sets


def to_kueue(
    plan: GangPlan,
    *,
    queue: str | None = None,
    priority_class: str | None = None,
    priority: int | None = None,
) -> list[dict[str, Any]]:
    """One Kueue `kueue.x-k8s.io/v1beta1` Workload per gang, its `podSets` from `kueue_pod_sets`.

    `queue` is the LocalQueue (`spec.queueName`). Kueue requires `spec.priority` with `spec.priorityClassName`: give
    both (`priority`), or the class alone goes on the pod templates (`spec.priorityClassName`), where Kueue's job
    integrations read it.
    """
    _need_plan(plan)
    manifests = []
    for gang in plan.gangs:
        pod_sets = kueue_pod_sets(gang, priority_class=priority_class if priority is None else None)
        if not pod_sets:
            raise ExportError(f"gang {gang.name} asks for no pods: a Kueue Workload needs at least one podSet")
        spec: dict[str, Any] = {"podSets": pod_sets}
        if queue:
            spec["queueName"] = queue
        if priority_class and priority is not None:
            spec["priorityClassName"] = priority_class
            spec["priorityClassSource"] = "scheduling.k8s.io/priorityclass"
            spec["priority"] = priority
        manifests.append(
            {"apiVersion": KUEUE_API_VERSION, "kind": "Workload", "metadata": _metadata(plan, gang.name), "spec": spec}
        )
    return manifests


# --- the Kubernetes Workload API ----------------------------------------------------------------------------------


def _templates(plan: GangPlan) -> dict[str, list[Gang]]:
    """Gangs by template name: the replicas of one gang (or its key splits) share one template."""
    templates: dict[str, list[Gang]] = {}
    for gang in plan.gangs:
        templates.setdefault(gang.template_name or "gang", []).append(gang)
    if len(templates) > WORKLOAD_MAX_POD_GROUPS:
        raise ExportError(
            f"{plan.workload.name} has {len(templates)} gang templates but a Workload holds at most "
            f"{WORKLOAD_MAX_POD_GROUPS} pod groups"
        )
    for name, gangs in templates.items():
        if len({gang.min_member for gang in gangs}) > 1:
            raise ExportError(f"gangs of template {name} have different min members; they cannot share a template")
    return templates


def _policy(min_member: int) -> dict[str, Any]:
    return {"gang": {"minCount": min_member}} if min_member > 0 else {"basic": {}}


def _controller_ref(plan: GangPlan) -> dict[str, Any] | None:
    ref = plan.workload
    if not ref.kind or not ref.name:
        return None
    group = ref.api_version.rpartition("/")[0] if "/" in ref.api_version else ""
    out: dict[str, Any] = {"kind": ref.kind, "name": ref.name}
    if group:
        out = {"apiGroup": group, **out}
    return out


def _scheduling_constraints(gang: Gang) -> dict[str, Any] | None:
    """v1alpha2 `schedulingConstraints`: the gang's required topology level as the one `topology[].key` the API
    allows (served only with the TopologyAwareWorkloadScheduling feature gate, alpha in 1.36)."""
    if gang.topology is None or not gang.topology.required_level:
        return None
    return {"topology": [{"key": gang.topology.required_level}]}


def to_workload_api(plan: GangPlan, *, api_version: str = WORKLOAD_API_VERSIONS[0]) -> list[dict[str, Any]]:
    """The Kubernetes Workload API (KEP-4671) objects for the plan.

    `scheduling.k8s.io/v1alpha2` (Kubernetes 1.36): one `Workload` with `spec.podGroupTemplates[{name,
    schedulingPolicy: {gang: {minCount}} | {basic: {}}, schedulingConstraints?}]` and one `PodGroup` per gang
    (`spec.podGroupTemplateRef.workload`, `spec.schedulingPolicy`). `scheduling.k8s.io/v1alpha1` (Kubernetes 1.35):
    one `Workload` with `spec.podGroups[{name, policy}]`; the replicas of a gang are told apart by the pods'
    `spec.workloadRef.podGroupReplicaKey` (see `pod_join`). Replicas of a gang share one template.
    """
    _need_plan(plan)
    if api_version not in WORKLOAD_API_VERSIONS:
        raise ExportError(
            f"unsupported Workload API version {api_version!r}; use one of {', '.join(WORKLOAD_API_VERSIONS)}"
        )
    templates = _templates(plan)
    workload_name = join_name([plan.workload.name]) or "workload"
    spec: dict[str, Any] = {}
    controller = _controller_ref(plan)
    if controller is not None:
        spec["controllerRef"] = controller
    entries = []
    for name, gangs in templates.items():
        policy = _policy(gangs[0].min_member)
        if api_version.endswith("v1alpha1"):
            entries.append({"name": name, "policy": policy})
            continue
        entry: dict[str, Any] = {"name": name, "schedulingPolicy": policy}
        constraints = _scheduling_constraints(gangs[0])
        if constraints is not None:
            entry["schedulingConstraints"] = constraints
        entries.append(entry)
    spec["podGroups" if api_version.endswith("v1alpha1") else "podGroupTemplates"] = entries
    manifests: list[dict[str, Any]] = [
        {"apiVersion": api_version, "kind": "Workload", "metadata": _metadata(plan, workload_name), "spec": spec}
    ]
    if api_version.endswith("v1alpha1"):
        return manifests
    for name, gangs in templates.items():
        for gang in gangs:
            group_spec: dict[str, Any] = {
                "podGroupTemplateRef": {"workload": {"workloadName": workload_name, "podGroupTemplateName": name}},
                "schedulingPolicy": _policy(gang.min_member),
            }
            constraints = _scheduling_constraints(gang)
            if constraints is not None:
                group_spec["schedulingConstraints"] = constraints
            manifests.append(
                {
                    "apiVersion": api_version,
                    "kind": "PodGroup",
                    "metadata": _metadata(plan, gang.name),
                    "spec": group_spec,
                }
            )
    return manifests


# --- dispatch and joining -------------------------------------------------------------------------------------


def export(
    plan: GangPlan,
    format: str,
    *,
    queue: str | None = None,
    priority_class: str | None = None,
    priority: int | None = None,
    schedule_timeout_seconds: int | None = None,
    workload_api_version: str = WORKLOAD_API_VERSIONS[0],
    volcano_sub_groups: bool = False,
) -> list[dict[str, Any]]:
    """The plan in one scheduler format (see the module doc); options a format has no field for are ignored."""
    if not isinstance(plan, GangPlan):
        raise ArgumentTypeError("the plan", "a GangPlan (workload_map.gang.plan)", plan)
    if not isinstance(format, str):
        raise ArgumentTypeError("format", f"one of {', '.join(FORMATS)} (a str)", format)
    if format == "kai":
        return to_kai(plan, queue=queue, priority_class=priority_class)
    if format == "volcano":
        return to_volcano(plan, queue=queue, priority_class=priority_class, sub_groups=volcano_sub_groups)
    if format == "coscheduling":
        return to_coscheduling(plan, schedule_timeout_seconds=schedule_timeout_seconds)
    if format == "kueue":
        return to_kueue(plan, queue=queue, priority_class=priority_class, priority=priority)
    if format == "workload":
        return to_workload_api(plan, api_version=workload_api_version)
    raise ExportError(f"unknown export format {format!r}; use one of {', '.join(FORMATS)}")


def _volcano_pod_labels(gang: Gang, leaf: str) -> dict[str, str]:
    groups = {group.name: group for group in gang.sub_groups}
    node = groups.get(leaf)
    if node is None:
        return {}
    top = node
    while top.parent is not None and top.parent in groups:
        top = groups[top.parent]
    labels = {VOLCANO_SUB_GROUP_LABEL: top.name}
    if node.replica is not None:
        labels[VOLCANO_REPLICA_LABEL] = node.replica
    return labels


def pod_join(
    plan: GangPlan,
    gang: Gang | str,
    format: str,
    *,
    role: GangRole | str | None = None,
    sub_group: str | None = None,
    queue: str | None = None,
    workload_api_version: str = WORKLOAD_API_VERSIONS[0],
    volcano_sub_groups: bool = False,
) -> dict[str, Any]:
    """What a pod of `gang` carries to join it in `format`: `{"labels": {...}, "annotations": {...}}` (Volcano with
    `volcano_sub_groups`: its top-level sub-group and replica as the labels `subGroupPolicy` selects) plus, for the
    Workload API, the pod spec field that links it (set at creation: both are immutable): v1alpha2 (1.36)
    `{"spec": {"schedulingGroup": {"podGroupName": <the gang's PodGroup>}}}`, v1alpha1 (1.35)
    `{"spec": {"workloadRef": {name, podGroup, podGroupReplicaKey?}}}`."""
    _need_plan(plan)
    if not isinstance(gang, Gang | str):
        raise ArgumentTypeError("gang", "a Gang of the plan or its name", gang)
    found = plan.gang(gang) if isinstance(gang, str) else gang
    role_name = role.name if isinstance(role, GangRole) else role
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    out: dict[str, Any] = {}
    if format == "kai":
        annotations[KAI_POD_GROUP_ANNOTATION] = found.name
        if sub_group:
            labels[KAI_SUBGROUP_LABEL] = sub_group
        if queue:
            labels[KAI_QUEUE_LABEL] = queue
    elif format == "volcano":
        annotations[VOLCANO_GROUP_ANNOTATION] = found.name
        if volcano_sub_groups and sub_group:
            labels.update(_volcano_pod_labels(found, sub_group))
        else:
            task = sub_group or role_name
            if task:
                annotations[VOLCANO_TASK_ANNOTATION] = task
    elif format == "coscheduling":
        labels[COSCHEDULING_POD_GROUP_LABEL] = found.name
    elif format == "kueue":
        if queue:
            labels[KUEUE_QUEUE_LABEL] = queue
    elif format == "workload":
        if workload_api_version.endswith("v1alpha1"):
            reference: dict[str, Any] = {
                "name": join_name([plan.workload.name]) or "workload",
                "podGroup": found.template_name or "gang",
            }
            key = join_name([found.replica or "", *found.split_keys])
            if key:
                reference["podGroupReplicaKey"] = key
            out["spec"] = {"workloadRef": reference}
        else:
            out["spec"] = {"schedulingGroup": {"podGroupName": found.name}}
    else:
        raise ExportError(f"unknown export format {format!r}; use one of {', '.join(FORMATS)}")
    out["labels"] = labels
    out["annotations"] = annotations
    return out


def joined_pod(
    plan: GangPlan,
    pod: Mapping[str, Any],
    format: str,
    *,
    queue: str | None = None,
    workload_api_version: str = WORKLOAD_API_VERSIONS[0],
    volcano_sub_groups: bool = False,
) -> dict[str, Any]:
    """A copy of `pod` carrying what joins it to its gang in `format` (`pod_join` for its gang and leaf
    sub-group, from its membership in the plan). A pod the plan does not place is returned unchanged (a copy)."""
    _need_plan(plan)
    if not isinstance(pod, Mapping):
        raise ArgumentTypeError("the pod", "a mapping (a Pod object)", pod)
    if not isinstance(format, str):
        raise ArgumentTypeError("format", f"one of {', '.join(FORMATS)} (a str)", format)
    out: dict[str, Any] = copy.deepcopy(dict(pod))
    metadata = out.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace") or ""
    membership = next((m for m in plan.pods if m.name == name and (m.namespace or "") == namespace), None)
    if membership is not None and plan.no_gang is not None and format == "kai" and isinstance(name, str):
        out["metadata"] = metadata
        annotations = metadata.get("annotations")
        metadata["annotations"] = {
            **(annotations if isinstance(annotations, dict) else {}),
            KAI_POD_GROUP_ANNOTATION: solo_pod_group_name(name),
        }
        return out
    if membership is None or membership.gang is None:
        return out
    join = pod_join(
        plan,
        membership.gang,
        format,
        sub_group=membership.sub_group,
        queue=queue,
        workload_api_version=workload_api_version,
        volcano_sub_groups=volcano_sub_groups,
    )
    out["metadata"] = metadata
    for key in ("labels", "annotations"):
        if join.get(key):
            existing = metadata.get(key)
            metadata[key] = {**(existing if isinstance(existing, dict) else {}), **join[key]}
    if "spec" in join:
        spec = out.get("spec")
        out["spec"] = {**(spec if isinstance(spec, dict) else {}), **join["spec"]}
    return out
