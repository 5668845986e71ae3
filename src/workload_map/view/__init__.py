"""The view: one workload rolled up into the tree every front end renders (CLI tree/table/json/yaml, exporters).

    from workload_map.view import build_view

    resolution = workload.resolve()
    view = build_view(resolution, attribute(resolution, pods, owners), origin="catalog")
    view.resources.gpus                    # 33
    view.to_dict()                         # JSON, schemaVersion "workloadmap.io/view/v1"
    json_schema()                          # its JSON Schema (shipped as view/view.schema.json)

See docs/view.md.
"""

from workload_map.view.build import build_view
from workload_map.view.podstatus import pod_node, pod_phase, pod_ready, pod_reason
from workload_map.view.schema import json_schema
from workload_map.view.types import (
    SCHEMA_VERSION,
    ComponentView,
    PodView,
    Replicas,
    Resources,
    WorkloadView,
    WorkloadViewDocument,
)

__all__ = [
    "SCHEMA_VERSION",
    "ComponentView",
    "PodView",
    "Replicas",
    "Resources",
    "WorkloadView",
    "WorkloadViewDocument",
    "build_view",
    "json_schema",
    "pod_node",
    "pod_phase",
    "pod_ready",
    "pod_reason",
]
