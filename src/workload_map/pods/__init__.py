"""The pods layer: pod selectors, owner chains and pod attribution (the resource arithmetic is
`workload_map.resources`).

    from workload_map.pods import attribute

See docs/view.md (attribution and the view).
"""

from workload_map.pods.attribution import (
    AttributedPod,
    Attribution,
    AttributionPlan,
    attribute,
    attribute_many,
    workload_uid,
)
from workload_map.pods.owners import (
    DEFAULT_MAX_HOPS,
    OwnerChains,
    OwnerIndex,
    OwnerRecord,
    Owners,
    owned_by,
)
from workload_map.pods.selectors import (
    InstanceNotFound,
    PodQuerier,
    SelectorError,
    go_string,
    matches_component_type,
    matches_labels,
)

__all__ = [
    "DEFAULT_MAX_HOPS",
    "AttributedPod",
    "Attribution",
    "AttributionPlan",
    "InstanceNotFound",
    "OwnerChains",
    "OwnerIndex",
    "OwnerRecord",
    "Owners",
    "PodQuerier",
    "SelectorError",
    "attribute",
    "attribute_many",
    "go_string",
    "matches_component_type",
    "matches_labels",
    "owned_by",
    "workload_uid",
]
