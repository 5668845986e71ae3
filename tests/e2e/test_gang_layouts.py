"""The gang trees written with the `workloadmap.io/gang` annotation's `layout` (docs/gang.md) on a real API server:
KAI's segments of an LWS group and of a PyTorchJob's workers, Grove's scaling groups and scaled PodGangs, and a
multi-node LLMInferenceService's gangs per group, exported for every scheduler whose CRD we serve and stored
without losing a field (the CRDs of tests/e2e/crds/gang-*.yaml check KAI's minMember/minSubGroup rules)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.fixtures.gang import obj, workload
from workload_map.catalog import builtin_registry
from workload_map.gang import export, plan
from workload_map.resolve import Workload

from .conftest import ApiServer
from .test_gang_exports import CRD_FORMATS, _create

pytestmark = pytest.mark.e2e

CATALOG = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


def _lws(policy: dict[str, Any]) -> Workload:
    value = obj("leaderworkerset")
    value["spec"]["leaderWorkerTemplate"]["size"] = 5
    value["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] = policy
    return workload("leaderworkerset", value)


def _pytorchjob() -> Workload:
    value = obj("pytorchjob")
    worker = value["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["replicas"] = 5
    worker["template"].setdefault("metadata", {})["annotations"] = {
        "kai.scheduler/segment-size": "2",
        "kai.scheduler/topology": "gb200",
        "kai.scheduler/segment-topology-required-placement": "nvidia.com/gpu.clique",
    }
    value["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 4}}
    return workload("pytorchjob", value)


def _catalog(slug: str) -> Workload:
    value = yaml.safe_load((CATALOG / slug / "workload.yaml").read_text())
    resolved = builtin_registry().for_object(value)
    assert resolved is not None
    return Workload(resolved.karta, value)


CASES: dict[str, Callable[[], Workload]] = {
    "lws-leader-worker-segments": lambda: _lws({"subGroupSize": 2}),
    "lws-leader-excluded-segments": lambda: _lws({"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}),
    "pytorchjob-worker-segments": _pytorchjob,
    "grove-scaling-group-and-scaled-podgang": lambda: _catalog("grove-io-podcliqueset-v1alpha1"),
    "llminferenceservice-multi-node": lambda: _catalog("serving-kserve-io-llminferenceservice-v1alpha1"),
}


@pytest.mark.parametrize("fmt", CRD_FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_api_server_accepts_every_export_of_a_layout(
    api_server: ApiServer, kube: httpx.Client, namespace: str, case: str, fmt: str
) -> None:
    manifests = export(plan(CASES[case]().resolve()), fmt, queue="research", priority_class="batch", priority=100)
    assert manifests
    for manifest in manifests:
        _create(api_server, kube, manifest, namespace)


def test_kais_segment_tree_is_stored_as_exported(api_server: ApiServer, kube: httpx.Client, namespace: str) -> None:
    (manifest,) = export(plan(_pytorchjob().resolve()), "kai")
    stored = _create(api_server, kube, manifest, namespace)
    assert [group["name"] for group in stored["spec"]["subGroups"]] == [
        "master",
        "worker",
        "worker-0",
        "worker-1",
        "worker-2",
    ]
    assert stored["spec"]["subGroups"][2]["topologyConstraint"] == {
        "topology": "gb200",
        "requiredTopologyLevel": "nvidia.com/gpu.clique",
    }
