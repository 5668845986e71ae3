"""Gang scheduling: one scheduler-neutral plan per workload, exported for KAI, Volcano, coscheduling, Kueue and the
Kubernetes Workload API.

    from workload_map.gang import plan, export

    gang_plan = plan(resolution)                        # offline: gangs, min members, min resources
    gang_plan = plan(resolution, pods)                  # plus each pod's gang
    manifests = export(gang_plan, "kai", queue="research")
    json_schema()                                       # the plan's JSON Schema (shipped as gang/plan.schema.json)

Upstream's building blocks are here too: `StructureSummary`, `infer_pod_component`, `pod_grouping`,
`subtree_scale`, `kai_pod_group_name`. See docs/gang.md.
"""

from workload_map.gang.errors import (
    ExportError,
    GangError,
    InstanceIdError,
    InvalidPodGroupName,
    MissingScaleError,
    NoGangInstructions,
    UnsatisfiableGang,
)
from workload_map.gang.exports import (
    FORMATS,
    WORKLOAD_API_VERSIONS,
    ExportFormat,
    export,
    joined_pod,
    kueue_pod_sets,
    min_member_of,
    pod_join,
    to_coscheduling,
    to_kai,
    to_kueue,
    to_volcano,
    to_workload_api,
)
from workload_map.gang.names import is_dns1123_label, is_dns1123_subdomain, to_dns1123_label
from workload_map.gang.plan import no_gang_reason, plan, pod_roles, unganged
from workload_map.gang.scale import role_counts, subtree_scale
from workload_map.gang.schema import json_schema
from workload_map.gang.summary import (
    Candidate,
    Grouping,
    StructureSummary,
    infer_pod_component,
    infer_pod_component_instance,
    kai_pod_group_name,
    pod_group_keys,
    pod_grouping,
    prioritize,
)
from workload_map.gang.types import (
    SCHEMA_VERSION,
    Gang,
    GangPlan,
    GangPlanDocument,
    GangRole,
    PodMembership,
    SubGroupPlan,
    Topology,
    format_resources,
)

__all__ = [
    "FORMATS",
    "SCHEMA_VERSION",
    "WORKLOAD_API_VERSIONS",
    "Candidate",
    "ExportError",
    "ExportFormat",
    "Gang",
    "GangError",
    "GangPlan",
    "GangPlanDocument",
    "GangRole",
    "Grouping",
    "InstanceIdError",
    "InvalidPodGroupName",
    "MissingScaleError",
    "NoGangInstructions",
    "PodMembership",
    "StructureSummary",
    "SubGroupPlan",
    "Topology",
    "UnsatisfiableGang",
    "export",
    "format_resources",
    "infer_pod_component",
    "infer_pod_component_instance",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "joined_pod",
    "json_schema",
    "kai_pod_group_name",
    "kueue_pod_sets",
    "min_member_of",
    "no_gang_reason",
    "plan",
    "pod_group_keys",
    "pod_grouping",
    "pod_join",
    "pod_roles",
    "prioritize",
    "role_counts",
    "subtree_scale",
    "to_coscheduling",
    "to_dns1123_label",
    "to_kai",
    "to_kueue",
    "to_volcano",
    "to_workload_api",
    "unganged",
]
