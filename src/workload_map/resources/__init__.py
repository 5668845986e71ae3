"""Resource arithmetic: Kubernetes quantities and the scheduler's request formula (docs/resources.md).

Pure functions over pod specs, below `resolve`, so a resolution can carry each instance's per-replica requests.

    from workload_map.resources import pod_requests, gpu_count, format_quantity
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.resources.formula import (
    GPU_RESOURCE_NAMES,
    ResourceList,
    ResourceSpecError,
    accelerator_names,
    add,
    alias_requirements,
    container_requests,
    fragmented_requests,
    gpu_count,
    is_extended_resource,
    is_gpu,
    pod_requests,
    scale,
    total,
)
from workload_map.resources.quantity import (
    NANO,
    Format,
    QuantityError,
    QuantityKind,
    canonical_quantity,
    format_canonical,
    format_for_table,
    format_quantity,
    int_value,
    milli_value,
    parse_nanos,
    parse_quantity,
    quantity_kind,
)

if TYPE_CHECKING:
    from workload_map.resources.human import cpu_text, human_amount, memory_text

__all__ = [
    "GPU_RESOURCE_NAMES",
    "NANO",
    "Format",
    "QuantityError",
    "QuantityKind",
    "ResourceList",
    "ResourceSpecError",
    "accelerator_names",
    "add",
    "alias_requirements",
    "canonical_quantity",
    "container_requests",
    "cpu_text",
    "format_canonical",
    "format_for_table",
    "format_quantity",
    "fragmented_requests",
    "gpu_count",
    "human_amount",
    "int_value",
    "is_extended_resource",
    "is_gpu",
    "memory_text",
    "milli_value",
    "parse_nanos",
    "parse_quantity",
    "pod_requests",
    "quantity_kind",
    "scale",
    "total",
]


# the human-readable amounts are for tables and trees (the CLI's renderers import their module themselves): a
# `describe -o json` never loads them (issue 19: start-up)
_HUMAN: frozenset[str] = frozenset({"cpu_text", "human_amount", "memory_text"})


def __getattr__(name: str) -> Any:
    if name in _HUMAN:
        from workload_map.resources import human

        return getattr(human, name)
    raise AttributeError(f"module 'workload_map.resources' has no attribute {name!r}")
