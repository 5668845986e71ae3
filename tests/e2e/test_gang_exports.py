"""The gang exports on a real API server: every PodGroup / Workload we write is accepted by a structural CRD
written from the scheduler's published API types (tests/e2e/crds/gang-*.yaml), stored without losing a field.

The Kubernetes Workload API (scheduling.k8s.io) is built in and alpha: the pinned test server (v1.36) serves our
default `v1alpha2` (feature gates GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling and the runtime
config scheduling.k8s.io/v1alpha2, scripts/test-cluster.sh). 1.35's `v1alpha1` is gone from 1.36, so that export is
untested here (docs/gang.md).
"""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from tests.fixtures.gang import workload
from workload_map.gang import WORKLOAD_API_VERSIONS, export, plan, pod_join

from .conftest import ApiServer, expect

pytestmark = pytest.mark.e2e

FIXTURES = ("pytorchjob", "jobset", "leaderworkerset", "inferencegraph")
CRD_FORMATS = ("kai", "volcano", "coscheduling", "kueue")


def _missing(sent: Any, got: Any, path: str = "") -> list[str]:
    """Paths of what was sent but is not in what the server stored (pruned or changed)."""
    if isinstance(sent, dict):
        if not isinstance(got, dict):
            return [f"{path or '.'}: sent an object, stored {got!r}"]
        out: list[str] = []
        for key, value in sent.items():
            if key not in got:
                out.append(f"{path}.{key}: pruned")
            else:
                out.extend(_missing(value, got[key], f"{path}.{key}"))
        return out
    if isinstance(sent, list):
        if not isinstance(got, list) or len(sent) != len(got):
            return [f"{path}: sent {sent!r}, stored {got!r}"]
        return [
            problem for index, item in enumerate(sent) for problem in _missing(item, got[index], f"{path}[{index}]")
        ]
    return [] if sent == got else [f"{path}: sent {sent!r}, stored {got!r}"]


def _create(api_server: ApiServer, kube: httpx.Client, manifest: dict[str, Any], namespace: str) -> dict[str, Any]:
    body = copy.deepcopy(manifest)
    body["metadata"]["namespace"] = namespace
    path = api_server.resource_path(kube, body["apiVersion"], body["kind"], namespace)
    stored = expect(kube.post(path, json=body, params={"fieldValidation": "Strict"}), 201)
    problems = _missing(body["spec"], stored["spec"], ".spec")
    assert not problems, f"{body['kind']} {body['metadata']['name']}: {problems}"
    return stored


@pytest.mark.parametrize("fmt", CRD_FORMATS)
@pytest.mark.parametrize("fixture", FIXTURES)
def test_the_api_server_accepts_every_export(
    api_server: ApiServer, kube: httpx.Client, namespace: str, fixture: str, fmt: str
) -> None:
    manifests = export(plan(workload(fixture).resolve()), fmt, queue="research", priority_class="batch", priority=100)
    assert manifests
    for manifest in manifests:
        _create(api_server, kube, manifest, namespace)


def test_the_kai_crd_enforces_the_published_rules(api_server: ApiServer, kube: httpx.Client, namespace: str) -> None:
    """The test CRD is not a rubber stamp: what KAI's types forbid is refused."""
    (pod_group,) = export(plan(workload("inferencegraph").resolve()), "kai")
    path = api_server.resource_path(kube, pod_group["apiVersion"], "PodGroup", namespace)
    both = copy.deepcopy(pod_group)
    both["metadata"]["namespace"] = namespace
    both["spec"]["minMember"] = 6
    assert kube.post(path, json=both).status_code == 422
    upper = copy.deepcopy(pod_group)
    upper["metadata"]["namespace"] = namespace
    upper["spec"]["subGroups"][0]["name"] = "Prefill"
    assert kube.post(path, json=upper).status_code == 422
    leaf_and_parent = copy.deepcopy(pod_group)
    leaf_and_parent["metadata"]["namespace"] = namespace
    leaf_and_parent["spec"]["subGroups"][0]["minSubGroup"] = 1
    assert kube.post(path, json=leaf_and_parent).status_code == 422
    orphan = copy.deepcopy(pod_group)
    orphan["metadata"]["namespace"] = namespace
    orphan["spec"]["subGroups"][0]["parent"] = "ghost"
    assert kube.post(path, json=orphan).status_code == 422


def test_the_kai_tree_of_a_jobset_is_stored_as_exported(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    (pod_group,) = export(plan(workload("jobset").resolve()), "kai")
    stored = _create(api_server, kube, pod_group, namespace)
    assert stored["spec"]["minSubGroup"] == 2
    assert [
        (g["name"], g.get("parent"), g.get("minMember"), g.get("minSubGroup")) for g in stored["spec"]["subGroups"]
    ] == [
        ("driver", None, None, 1),
        ("driver-replica-0", "driver", 1, None),
        ("workers", None, None, 2),
        ("workers-replica-0", "workers", 4, None),
        ("workers-replica-1", "workers", 4, None),
    ]


def test_the_kueue_crd_enforces_min_count_and_priority(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    (workload_object,) = export(plan(workload("pytorchjob").resolve()), "kueue")
    path = api_server.resource_path(kube, workload_object["apiVersion"], "Workload", namespace)
    too_many = copy.deepcopy(workload_object)
    too_many["metadata"]["namespace"] = namespace
    too_many["spec"]["podSets"][1]["minCount"] = 9
    assert kube.post(path, json=too_many).status_code == 422
    no_value = copy.deepcopy(workload_object)
    no_value["metadata"]["namespace"] = namespace
    no_value["spec"]["priorityClassName"] = "batch"
    assert kube.post(path, json=no_value).status_code == 422


def _served(kube: httpx.Client, group_version: str, kind: str) -> bool:
    response = kube.get(f"/apis/{group_version}")
    if response.status_code != 200:
        return False
    return any(resource.get("kind") == kind for resource in response.json().get("resources", []))


def test_the_pinned_server_serves_the_workload_api_version_we_export_by_default(kube: httpx.Client) -> None:
    assert _served(kube, WORKLOAD_API_VERSIONS[0], "Workload")
    assert _served(kube, WORKLOAD_API_VERSIONS[0], "PodGroup")


def test_the_workload_api_accepts_the_v1alpha2_export(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    for fixture in FIXTURES:
        manifests = export(plan(workload(fixture).resolve()), "workload")
        assert {manifest["kind"] for manifest in manifests} == {"Workload", "PodGroup"}
        for manifest in manifests:
            _create(api_server, kube, manifest, namespace)


def test_a_topology_level_is_stored_as_the_pod_groups_topology_key(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    manifests = export(plan(workload("inferencegraph").resolve()), "workload")
    stored = [_create(api_server, kube, manifest, namespace) for manifest in manifests]
    templates = stored[0]["spec"]["podGroupTemplates"]
    assert {template["schedulingConstraints"]["topology"][0]["key"] for template in templates} == {
        "topology.kubernetes.io/zone"
    }


def test_pods_link_to_their_pod_group_through_the_scheduling_group_field(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    gang_plan = plan(workload("jobset").resolve())
    for manifest in export(gang_plan, "workload"):
        _create(api_server, kube, manifest, namespace)
    path = api_server.resource_path(kube, "v1", "Pod", namespace)
    for gang in gang_plan.gangs:
        join = pod_join(gang_plan, gang, "workload")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{gang.name}-0", "namespace": namespace, "labels": join["labels"]},
            "spec": {"containers": [{"name": "main", "image": "busybox"}], **join["spec"]},
        }
        stored = expect(kube.post(path, json=pod, params={"fieldValidation": "Strict"}), 201)
        assert stored["spec"]["schedulingGroup"] == {"podGroupName": gang.name}
        assert (
            expect(
                kube.get(
                    api_server.resource_path(kube, WORKLOAD_API_VERSIONS[0], "PodGroup", namespace) + "/" + gang.name
                )
            )["metadata"]["name"]
            == gang.name
        )


def test_the_v1alpha1_export_is_untested_on_the_pinned_server(kube: httpx.Client) -> None:
    """1.36 removed v1alpha1; this pins that fact, so a server that serves it again is noticed (docs/gang.md)."""
    assert not _served(kube, "scheduling.k8s.io/v1alpha1", "Workload")


def test_the_volcano_sub_group_policy_export_is_stored_as_exported(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    (pod_group,) = export(plan(workload("jobset").resolve()), "volcano", volcano_sub_groups=True)
    stored = _create(api_server, kube, pod_group, namespace)
    assert [
        (entry["name"], entry["subGroupSize"], entry["minSubGroups"]) for entry in stored["spec"]["subGroupPolicy"]
    ] == [
        ("driver", 1, 1),
        ("workers", 4, 2),
    ]
    assert "minTaskMember" not in stored["spec"]
