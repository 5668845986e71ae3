"""The gang exports on a real API server: every PodGroup / Workload we write is accepted by a structural CRD
written from the scheduler's published API types (tests/e2e/crds/gang-*.yaml), stored without losing a field.

The Kubernetes Workload API (scheduling.k8s.io) is built in and alpha (1.35+, feature gate GenericWorkload); the
test server is v1.34 with default gates, so those tests skip with that reason unless the server serves the API.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from tests.fixtures.gang import workload
from workload_map.gang import export, plan

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
    manifests = export(plan(workload(fixture)), fmt, queue="research", priority_class="batch", priority=100)
    assert manifests
    for manifest in manifests:
        _create(api_server, kube, manifest, namespace)


def test_the_kai_crd_enforces_the_published_rules(api_server: ApiServer, kube: httpx.Client, namespace: str) -> None:
    """The test CRD is not a rubber stamp: what KAI's types forbid is refused."""
    (pod_group,) = export(plan(workload("inferencegraph")), "kai")
    path = api_server.resource_path(kube, pod_group["apiVersion"], "PodGroup", namespace)
    both = copy.deepcopy(pod_group)
    both["metadata"]["namespace"] = namespace
    both["spec"]["minMember"] = 6
    assert kube.post(path, json=both).status_code == 422
    upper = copy.deepcopy(pod_group)
    upper["metadata"]["namespace"] = namespace
    upper["spec"]["subGroups"][0]["name"] = "Prefill"
    assert kube.post(path, json=upper).status_code == 422


def test_the_kueue_crd_enforces_min_count_and_priority(
    api_server: ApiServer, kube: httpx.Client, namespace: str
) -> None:
    (workload_object,) = export(plan(workload("pytorchjob")), "kueue")
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


@pytest.mark.parametrize("version", ["scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha1"])
def test_the_workload_api_accepts_the_export_when_served(
    api_server: ApiServer, kube: httpx.Client, namespace: str, version: str
) -> None:
    if not _served(kube, version, "Workload"):
        pytest.skip(
            f"the test API server ({api_server.k8s_version or 'v1.34'}) does not serve {version} Workload: the "
            f"Workload API is alpha in Kubernetes 1.35+ behind the GenericWorkload feature gate"
        )
    for fixture in FIXTURES:
        for manifest in export(plan(workload(fixture)), "workload", workload_api_version=version):
            _create(api_server, kube, manifest, namespace)
