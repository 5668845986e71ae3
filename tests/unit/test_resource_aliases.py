"""Per-definition resource aliases (`workloadmap.io/resource-aliases`, `workloadmap.io/resources-shape`).

A framework's own resource keys (Dynamo v1alpha1's `limits: {gpu: "1", gpuType: ...}`, NIMCache's flat
`resources: {cpu, memory}`) are mapped onto Kubernetes resource names where a resolution computes one replica's
requests and builds a pod template from fragments, while the definition's paths stay plain writable jq paths. The
validator reports a malformed annotation and warns on a target that no container may request.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.gang import plan
from workload_map.model import Karta
from workload_map.model.extensions import (
    RESOURCE_ALIASES,
    RESOURCES_SHAPE,
    ResourceAlias,
    ResourceAliases,
    is_valid_resource_name,
    resource_alias_problems,
    resource_aliases,
)
from workload_map.resolve import Workload
from workload_map.resources import alias_requirements, container_requests, fragmented_requests, pod_requests
from workload_map.validation import validate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
DYNAMO = "nvidia-com-dynamographdeployment-v1alpha1"
DYNAMO_ALIASES = ResourceAliases(
    {
        "gpu": ResourceAlias("nvidia.com/gpu", name_from="gpuType"),
        "gpuType": ResourceAlias(None),
        "custom": ResourceAlias(None, entries=True),
    }
)


def _annotations(aliases: Any = None, shape: str | None = None) -> dict[str, str]:
    out = {}
    if aliases is not None:
        out[RESOURCE_ALIASES] = aliases if isinstance(aliases, str) else json.dumps(aliases)
    if shape is not None:
        out[RESOURCES_SHAPE] = shape
    return out


# --- the annotation ------------------------------------------------------------------------------------------


def test_each_alias_form_is_read() -> None:
    found = resource_aliases(
        _annotations(
            {
                "gpu": {"nameFrom": "gpuType", "default": "nvidia.com/gpu"},
                "gpuType": None,
                "custom": {"entries": True},
                "tpu": "google.com/tpu",
            }
        )
    )
    assert found == ResourceAliases(
        {
            "gpu": ResourceAlias("nvidia.com/gpu", name_from="gpuType"),
            "gpuType": ResourceAlias(None),
            "custom": ResourceAlias(None, entries=True),
            "tpu": ResourceAlias("google.com/tpu"),
        }
    )
    assert found.names() == ["nvidia.com/gpu", "google.com/tpu"]


def test_no_annotation_is_no_aliases_and_the_shape_alone_is_read() -> None:
    assert resource_aliases(None) is None
    assert resource_aliases({"workloadmap.io/description": "x"}) is None
    assert resource_aliases(_annotations(shape="resource-list")) == ResourceAliases({}, flat=True)


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (_annotations("{not json"), "not JSON"),
        (_annotations([["gpu", "nvidia.com/gpu"]]), "expected a JSON object, got array"),
        (_annotations({"gpu": ""}), "an empty resource name"),
        (_annotations({"gpu": 1}), "expected a resource name, null or an object, got number"),
        (_annotations({"gpu": {"default": "nvidia.com/gpu"}}), 'expected {"nameFrom"'),
        (_annotations({"gpu": {"nameFrom": "t", "other": 1}}), "unknown other"),
        (_annotations({"custom": {"entries": False}}), "entries must be true"),
        (_annotations(shape="list"), "expected one of resource-requirements, resource-list"),
    ],
)
def test_a_malformed_annotation_is_a_problem_and_is_left_out(annotations: dict[str, str], message: str) -> None:
    problems = resource_alias_problems(annotations)
    assert len(problems) == 1 and message in problems[0][1]
    found = resource_aliases(annotations)
    assert found is not None and not found


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("cpu", True),
        ("memory", True),
        ("ephemeral-storage", True),
        ("hugepages-2Mi", True),
        ("nvidia.com/gpu", True),
        ("nvidia.com/mig-1g.5gb", True),
        ("gpu.intel.com/xe", True),
        ("gpu", False),
        ("gpus", False),
        ("hugepages-", False),
        ("kubernetes.io/gpu", False),
        ("example.kubernetes.io/x", False),
        ("Example.com/x", False),
        ("a/b/c", False),
        ("nvidia.com/", False),
    ],
)
def test_kubernetes_container_resource_names(name: str, valid: bool) -> None:
    assert is_valid_resource_name(name) is valid


# --- the arithmetic ------------------------------------------------------------------------------------------


def test_the_gpu_shorthand_counts_as_nvidia_gpus_and_gpu_type_is_no_resource() -> None:
    fragment = {"resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"gpu": "2"}}}
    assert fragmented_requests(fragment, DYNAMO_ALIASES) == {
        "cpu": Fraction(2),
        "memory": Fraction(4 * 2**30),
        "nvidia.com/gpu": Fraction(2),
    }
    # without the aliases, the bare key is counted as written (and is no GPU)
    assert fragmented_requests(fragment)["gpu"] == Fraction(2)


def test_the_gpu_is_counted_as_the_resource_gpu_type_names_and_custom_entries_as_written() -> None:
    fragment = {
        "resources": {
            "requests": {"cpu": "8", "custom": {"example.com/rdma": "1"}},
            "limits": {"gpu": "1", "gpuType": "gpu.intel.com/xe"},
        }
    }
    assert fragmented_requests(fragment, DYNAMO_ALIASES) == {
        "cpu": Fraction(8),
        "example.com/rdma": Fraction(1),
        "gpu.intel.com/xe": Fraction(1),
    }


def test_a_custom_entry_wins_over_the_renamed_key_as_the_operator_writes_it_last() -> None:
    fragment = {"resources": {"limits": {"custom": {"nvidia.com/gpu": "4"}, "gpu": "1"}}}
    assert fragmented_requests(fragment, DYNAMO_ALIASES) == {"nvidia.com/gpu": Fraction(4)}


def test_aliases_apply_to_container_and_pod_resources_too() -> None:
    container = {"name": "main", "resources": {"limits": {"gpu": "1"}}}
    assert container_requests(container, DYNAMO_ALIASES) == {"nvidia.com/gpu": Fraction(1)}
    assert pod_requests({"containers": [container, container]}, DYNAMO_ALIASES) == {"nvidia.com/gpu": Fraction(2)}


def test_a_bad_quantity_under_an_alias_names_the_framework_key() -> None:
    with pytest.raises(ValueError, match=r'resources.limits\["gpu"\]'):
        fragmented_requests({"resources": {"limits": {"gpu": "one"}}}, DYNAMO_ALIASES)


def test_a_flat_resource_list_stands_for_requests_and_limits() -> None:
    flat = ResourceAliases({}, flat=True)
    assert fragmented_requests({"resources": {"cpu": "4", "memory": "16Gi"}}, flat) == {
        "cpu": Fraction(4),
        "memory": Fraction(16 * 2**30),
    }
    assert alias_requirements({"cpu": "4"}, flat) == {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}
    assert alias_requirements({}, flat) == {}


def test_alias_requirements_renames_the_keys_and_keeps_the_quantities_as_written() -> None:
    resources = {"limits": {"gpu": "1", "gpuType": "amd.com/gpu"}, "requests": {"cpu": "500m"}, "claims": []}
    assert alias_requirements(resources, DYNAMO_ALIASES) == {
        "limits": {"amd.com/gpu": "1"},
        "requests": {"cpu": "500m"},
        "claims": [],
    }
    assert alias_requirements(resources, None) is resources


# --- through a resolution ------------------------------------------------------------------------------------


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _dynamo() -> tuple[Karta, dict[str, Any]]:
    obj = _read(FIXTURES / DYNAMO / "variants" / "multinode-gpu-shorthand" / "workload.yaml")
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    return resolved.karta, obj


def test_a_multinode_service_holds_nodes_times_its_gpu_shorthand() -> None:
    karta, obj = _dynamo()
    resolution = Workload(karta, obj).resolve()
    decode = resolution.component("service").instance("decode")
    assert decode is not None
    assert decode.requests == {"nvidia.com/gpu": Fraction(1)}
    assert decode.desired_replicas == 2  # replicas 1 x multinode.nodeCount 2
    template = decode.pod_template
    assert template is not None
    assert template["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_the_gang_plan_asks_for_nvidia_gpus_not_a_resource_named_gpu() -> None:
    karta, obj = _dynamo()
    gangs = plan(Workload(karta, obj).resolve()).to_dict()["gangs"]
    assert gangs[0]["minResources"] == {"nvidia.com/gpu": "4"}


def test_without_the_alias_the_gang_plan_notes_the_invalid_resource_name() -> None:
    karta, obj = _dynamo()
    annotations = dict(karta.metadata.annotations or {})
    del annotations[RESOURCE_ALIASES]
    bare = msgspec.structs.replace(karta, metadata=msgspec.structs.replace(karta.metadata, annotations=annotations))
    result = plan(Workload(bare, obj).resolve()).to_dict()
    assert result["gangs"][0]["minResources"] == {"gpu": "4"}
    assert any("requests gpu, not a valid Kubernetes resource name" in note for note in result["notes"])


def test_the_resources_path_stays_writable() -> None:
    karta, obj = _dynamo()
    workload = Workload(karta, obj)
    specs = workload.component("service").fragmented_pod_specs
    assert specs is not None
    assert specs["decode"].resources == {"limits": {"gpu": "1"}}
    changed = {iid: msgspec.structs.replace(spec) for iid, spec in specs.items()}
    changed["decode"] = msgspec.structs.replace(specs["decode"], resources={"limits": {"gpu": "2"}})
    workload.component("service").update_fragmented_pod_specs(changed)
    assert workload.merge_patch() == {"spec": {"services": {"decode": {"resources": {"limits": {"gpu": "2"}}}}}}
    assert workload.resolve().component("service").instance("decode").requests == {"nvidia.com/gpu": Fraction(2)}


# --- validation ----------------------------------------------------------------------------------------------


def _with_annotation(karta: Karta, text: str) -> Karta:
    annotations = dict(karta.metadata.annotations or {})
    annotations[RESOURCE_ALIASES] = text
    return msgspec.structs.replace(karta, metadata=msgspec.structs.replace(karta.metadata, annotations=annotations))


def test_the_validator_reports_a_malformed_annotation_as_an_error() -> None:
    karta, _ = _dynamo()
    findings = validate(_with_annotation(karta, '{"gpu": 1}'))
    assert [(f.severity, f.rule, f.path) for f in findings] == [
        ("error", "resource-alias", f'metadata.annotations["{RESOURCE_ALIASES}"]')
    ]


def test_the_validator_warns_on_a_target_no_container_may_request() -> None:
    karta, _ = _dynamo()
    findings = validate(_with_annotation(karta, '{"gpu": "gpu", "tpu": "google.com/tpu"}'))
    assert [(f.severity, f.rule) for f in findings] == [("warning", "resource-name")]
    assert "'gpu' is counted as 'gpu'" in findings[0].message


def test_the_built_in_definitions_with_aliases_validate_clean() -> None:
    with_aliases = [
        entry.karta
        for entry in builtin_registry().all()
        if RESOURCE_ALIASES in (entry.karta.metadata.annotations or {})
        or RESOURCES_SHAPE in (entry.karta.metadata.annotations or {})
    ]
    assert with_aliases
    for karta in with_aliases:
        assert validate(copy.deepcopy(karta)) == [], karta.name
