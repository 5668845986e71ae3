"""The pod webhook's decisions (`controller/pod_links.py`): one resolution per workload version for a burst of its
pods, a new one for a new resourceVersion or a new definition, and the patch each pod gets."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.controller.grouping import KAI_SKIP_ANNOTATION
from workload_map.controller.pod_links import WorkloadPlans, _resolve, link_patch
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.model import Karta
from workload_map.resolve import Resolution

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "jobset-x-k8s-io-jobset-v1alpha2"


def _items(name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all((FIXTURE / name).read_text()):
        if isinstance(doc, dict):
            found += doc.get("items") or [] if doc.get("kind") == "List" else [doc]
    return found


class _Counting:
    """The real resolver, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, karta: Karta, top: Mapping[str, Any], policy: EvaluationPolicy) -> Resolution:
        self.calls += 1
        return _resolve(karta, top, policy)


def _setup() -> tuple[Karta, dict[str, Any], list[dict[str, Any]]]:
    workload = _items("workload.yaml")[0]
    workload["metadata"]["resourceVersion"] = "100"  # as read from the API server
    found = DefinitionRegistry([("catalog", builtin_definitions())]).for_object(workload)
    assert found is not None and found.karta.gang_scheduling is not None
    pods = [p for p in _items("pods.yaml") if p.get("kind") == "Pod"]
    assert len(pods) >= 4
    return found.karta, workload, pods


def _without_cache(karta: Karta, top: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any] | None:
    return WorkloadPlans().links(karta, top, pod, "kai", policy=INPROCESS)


def test_a_burst_of_one_workload_version_resolves_once() -> None:
    karta, top, pods = _setup()
    resolver = _Counting()
    plans = WorkloadPlans(resolver)
    joins = [plans.links(karta, top, pod, "kai", policy=INPROCESS) for pod in pods * 3]
    assert resolver.calls == 1
    assert len(plans) == 1
    # the same answers as a fresh resolution per pod (what the webhook did before the cache)
    assert joins == [_without_cache(karta, top, pod) for pod in pods * 3]
    assert all(j is not None and j["annotations"].get("pod-group-name") for j in joins)
    assert len({j["labels"].get("kai.scheduler/subgroup-name") for j in joins if j is not None}) > 1


def test_a_new_resource_version_or_definition_resolves_again() -> None:
    karta, top, pods = _setup()
    resolver = _Counting()
    plans = WorkloadPlans(resolver)
    plans.links(karta, top, pods[0], "kai", policy=INPROCESS)
    scaled = copy.deepcopy(top)
    scaled["metadata"]["resourceVersion"] = "101"
    scaled["spec"]["replicatedJobs"][-1]["replicas"] = 5
    for pod in pods:
        plans.links(karta, scaled, pod, "kai", policy=INPROCESS)
    assert resolver.calls == 2
    # a Karta re-read (a new definition object) is not served the old one's resolution
    reread = copy.deepcopy(karta)
    assert reread is not karta
    plans.links(reread, scaled, pods[0], "kai", policy=INPROCESS)
    assert resolver.calls == 3
    # the older version, asked for again, is still kept
    plans.links(karta, top, pods[1], "kai", policy=INPROCESS)
    assert resolver.calls == 3


def test_without_uid_or_resource_version_nothing_is_shared() -> None:
    karta, top, pods = _setup()
    unversioned = copy.deepcopy(top)
    unversioned["metadata"].pop("resourceVersion", None)
    resolver = _Counting()
    plans = WorkloadPlans(resolver)
    for pod in pods[:3]:
        plans.links(karta, unversioned, pod, "kai", policy=INPROCESS)
    assert resolver.calls == 3
    assert len(plans) == 0


def test_the_table_keeps_at_most_its_size() -> None:
    karta, top, pods = _setup()
    resolver = _Counting()
    plans = WorkloadPlans(resolver, kept=2)
    versions = []
    for n in range(3):
        version = copy.deepcopy(top)
        version["metadata"]["resourceVersion"] = f"9{n}"
        versions.append(version)
        plans.links(karta, version, pods[0], "kai", policy=INPROCESS)
    assert len(plans) == 2 and resolver.calls == 3
    plans.links(karta, versions[0], pods[0], "kai", policy=INPROCESS)  # the oldest was dropped
    assert resolver.calls == 4


def test_the_patch_adds_only_what_the_pod_lacks() -> None:
    karta, top, pods = _setup()
    pod = copy.deepcopy(pods[0])
    pod["metadata"].pop("annotations", None)
    join = WorkloadPlans().links(karta, top, pod, "kai", policy=INPROCESS)
    assert join is not None and join["annotations"][KAI_SKIP_ANNOTATION] == "true"
    ops = link_patch(pod, join)
    assert {"op": "add", "path": "/metadata/annotations", "value": join["annotations"]} in ops
    label_ops = [op for op in ops if op["path"].startswith("/metadata/labels/")]
    assert "/metadata/labels/kai.scheduler~1subgroup-name" in {op["path"] for op in label_ops}
    assert all("/" not in op["path"].removeprefix("/metadata/labels/") for op in label_ops)
    linked = copy.deepcopy(pod)
    linked["metadata"]["annotations"] = dict(join["annotations"])
    linked["metadata"]["labels"] = {**linked["metadata"].get("labels", {}), **join["labels"]}
    assert link_patch(linked, join) == []


def test_the_workload_api_link_is_a_spec_field() -> None:
    karta, top, pods = _setup()
    join = WorkloadPlans().links(karta, top, pods[0], "workload", policy=INPROCESS)
    assert join is not None and "schedulingGroup" in join["spec"]
    ops = link_patch(pods[0], join)
    assert {"op": "add", "path": "/spec/schedulingGroup", "value": join["spec"]["schedulingGroup"]} in ops
