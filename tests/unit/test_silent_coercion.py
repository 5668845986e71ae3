"""No silent coercion (issue 16), decided per case:

| input | before | now |
|---|---|---|
| NaN or ±inf replicas (YAML `.nan`, Python `float("nan")`) | shown as 1 | refused when read, naming the place |
| YAML 1.1 base-60 `1:30` | 90 replicas | the string kubectl reads: `not a base-10 integer` |
| negative replicas | 0, silently | 0, documented, and a warning in `resolution.warnings` |
| a quantity of `-4` | negative GPU totals | a `QuantityError` naming the field; the totals stay >= 0 |
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from workload_map import build_view
from workload_map.model import DocumentError, karta_from_dict, parse_documents
from workload_map.resolve import ExtractionError, InvalidObjectError, Workload
from workload_map.resources import QuantityError, pod_requests

GVK = {"group": "example.com", "version": "v1", "kind": "Thing"}


def karta() -> Any:
    return karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {"name": "root", "kind": GVK, "statusDefinition": {"statusMappings": {}}},
                    "childComponents": [
                        {
                            "name": "c",
                            "ownerRef": "root",
                            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                            "scaleDefinition": {"replicasPath": ".spec.replicas", "minReplicasPath": ".spec.min"},
                        }
                    ],
                }
            },
        }
    )


def thing(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


GPU_TEMPLATE = {"spec": {"containers": [{"name": "m", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


# --- NaN and infinities ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_replicas_in_an_object_are_refused_naming_the_field(value: float) -> None:
    workload = Workload(karta(), thing(replicas=value, template=GPU_TEMPLATE))  # checked when read
    with pytest.raises(InvalidObjectError, match=r"spec\.replicas holds (NaN|an infinite number), which JSON cannot"):
        workload.resolve()
    with pytest.raises(InvalidObjectError, match=r"spec\.replicas holds (NaN|an infinite number), which JSON cannot"):
        _ = workload.component("c").scales


@pytest.mark.parametrize("text", [".nan", ".inf", "-.Inf", ".NaN"])
def test_non_finite_replicas_in_yaml_are_refused_with_the_line(text: str) -> None:
    with pytest.raises(DocumentError, match=r"line 3, column 13: replicas: an? (NaN|infinite number)"):
        parse_documents(f"kind: Thing\nspec:\n  replicas: {text}\n")


# --- base-60 ---------------------------------------------------------------------------------------------------------


def test_base_60_stays_a_string_and_is_not_a_replica_count() -> None:
    (document,) = parse_documents("spec:\n  replicas: 1:30\n  ratio: 1:30.5\n  port: 8080\n")
    assert document.value == {"spec": {"replicas": "1:30", "ratio": "1:30.5", "port": 8080}}
    obj = {**thing(template=GPU_TEMPLATE), "spec": {"replicas": "1:30", "template": GPU_TEMPLATE}}
    workload = Workload(karta(), obj)
    with pytest.raises(ExtractionError, match=r'the string "1:30", not a base-10 integer'):
        _ = workload.component("c").scales


def test_other_yaml_11_numbers_are_read_as_go_yaml_reads_them() -> None:
    (document,) = parse_documents("a: 0x1F\nb: 1_000\nc: 017\nd: 1.5\ne: yes\n")
    assert document.value == {"a": 31, "b": 1000, "c": 15, "d": 1.5, "e": True}


# --- negative replicas -----------------------------------------------------------------------------------------------


def test_negative_replicas_read_as_0_and_are_a_warning() -> None:
    resolution = Workload(karta(), thing(replicas=-3, min=-1, template=GPU_TEMPLATE)).resolve()
    instance = resolution.component("c").instances[""]
    assert (instance.scale and instance.scale.replicas, instance.desired_replicas) == (-3, 0)
    assert resolution.errors == ()
    assert [(w.field, w.message) for w in resolution.warnings] == [
        ("scaleDefinition.replicasPath", "replicas is -3; a negative count reads as 0"),
        ("scaleDefinition.minReplicasPath", "minReplicas is -1; a negative count reads as 0"),
    ]
    assert build_view(resolution).replicas.desired == 0
    assert Workload(karta(), thing(replicas=2, template=GPU_TEMPLATE)).resolve().warnings == ()


# --- negative quantities ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("amount", ["-4", -4, "-1m", -0.5])
def test_a_negative_request_is_a_quantity_error_naming_the_field(amount: Any) -> None:
    spec = {"containers": [{"name": "m", "resources": {"requests": {"nvidia.com/gpu": amount}}}]}
    with pytest.raises(
        QuantityError, match=r'container "m" resources.requests\["nvidia.com/gpu"\]: .*cannot be negative'
    ):
        pod_requests(spec)


def test_a_negative_gpu_quantity_never_makes_negative_totals() -> None:
    template = {"spec": {"containers": [{"name": "m", "resources": {"limits": {"nvidia.com/gpu": "-4"}}}]}}
    resolution = Workload(karta(), thing(replicas=2, template=template)).resolve()
    (error,) = resolution.errors
    assert error.field == "specDefinition.podTemplateSpecPath" and "cannot be negative" in error.message
    view = build_view(resolution)
    assert view.resources.gpus == 0
    assert pod_requests({"containers": [{"resources": {"limits": {"nvidia.com/gpu": "-0"}}}]}) == {"nvidia.com/gpu": 0}
