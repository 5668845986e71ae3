"""The view: one workload rolled up into the tree every front end renders (CLI tree/table/json/yaml, exporters).

    from workload_map.view import build_view

    resolution = workload.resolve()
    view = build_view(resolution, attribute(resolution, pods, owners), origin="catalog")
    view.resources.gpus                    # 33
    view.to_dict()                         # JSON, schemaVersion "workloadmap.io/view/v1"
    json_schema()                          # its JSON Schema (shipped as view/view.schema.json)

See docs/view.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.view.build import build_view
from workload_map.view.podstatus import pod_node, pod_phase, pod_ready, pod_reason
from workload_map.view.types import (
    SCHEMA_VERSION,
    ComponentView,
    PodView,
    Replicas,
    Resources,
    WorkloadView,
    WorkloadViewDocument,
)

if TYPE_CHECKING:
    from workload_map.view.schema import json_schema

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


def __getattr__(name: str) -> Any:
    # the JSON Schema (and the model's schema generator under it) only when asked for: no part of rendering a view
    if name == "json_schema":
        from workload_map.view.schema import json_schema

        return json_schema
    raise AttributeError(f"module 'workload_map.view' has no attribute {name!r}")
