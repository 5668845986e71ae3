"""TYPE tokens: every spelling kubectl takes resolves through discovery to a definition and the resource to read;
unserved types resolve through the definitions; ambiguity lists tokens that resolve; the discovery document
round-trips through its disk cache."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.cluster import AmbiguousType, DiscoveryDocument, TypeNotCovered, readings, resolve_type
from workload_map.cluster.discovery import cache_file, read_cache, write_cache
from workload_map.model import karta_from_dict


def res(
    plural: str, kind: str, *, singular: str = "", short: tuple[str, ...] = (), scope: str = "Namespaced"
) -> dict[str, Any]:
    return {
        "resource": plural,
        "responseKind": {"group": "", "version": "", "kind": kind},
        "scope": scope,
        "singularResource": singular or kind.lower(),
        "verbs": ["get", "list", "patch"],
        "shortNames": list(short),
    }


def group(name: str, *versions: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "versions": [{"version": v, "resources": r} for v, r in versions]}


CORE = {
    "kind": "APIGroupDiscoveryList",
    "items": [
        {
            "metadata": {},
            "versions": [
                {
                    "version": "v1",
                    "resources": [
                        res("pods", "Pod", short=("po",)),
                        res("services", "Service", short=("svc",)),
                        res("namespaces", "Namespace", short=("ns",), scope="Cluster"),
                    ],
                }
            ],
        }
    ],
}
GROUPS = {
    "kind": "APIGroupDiscoveryList",
    "items": [
        group("apps", ("v1", [res("deployments", "Deployment", short=("deploy",)), res("replicasets", "ReplicaSet")])),
        group("batch", ("v1", [res("jobs", "Job"), res("cronjobs", "CronJob", short=("cj",))])),
        group("jobset.x-k8s.io", ("v1alpha2", [res("jobsets", "JobSet")])),
        group("serving.knative.dev", ("v1", [res("services", "Service", short=("ksvc", "kservice"))])),
        group("nvidia.com", ("v1alpha1", [res("dynamographdeployments", "DynamoGraphDeployment", short=("dgd",))])),
        group("kubeflow.org", ("v1", [res("pytorchjobs", "PyTorchJob")])),
        group("example.com", ("v1", [res("jobs", "Job")])),  # a CRD that shares `jobs` with batch
        group("other.io", ("v2", [res("jobsets", "JobSet")]), ("v1", [res("jobsets", "JobSet")])),
    ],
}


@pytest.fixture(scope="module")
def discovery() -> DiscoveryDocument:
    return DiscoveryDocument.from_aggregated(CORE, GROUPS)


@pytest.fixture(scope="module")
def registry() -> DefinitionRegistry:
    return DefinitionRegistry([("catalog", builtin_definitions())])


def other_jobset(version: str) -> Any:
    return karta_from_dict(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": f"other-jobset-{version}"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "jobset",
                        "kind": {"group": "other.io", "version": version, "kind": "JobSet"},
                        "statusDefinition": {
                            "statusMappings": {"running": [{"byConditions": [{"type": "R", "status": "True"}]}]}
                        },
                    }
                }
            },
        }
    )


def test_readings_follow_kubectl() -> None:
    assert [(r.name, r.group, r.version) for r in readings("JobSets")] == [("jobsets", None, None)]
    assert [(r.name, r.group, r.version) for r in readings("jobsets.jobset.x-k8s.io")] == [
        ("jobsets", "x-k8s.io", "jobset"),
        ("jobsets", "jobset.x-k8s.io", None),
    ]
    assert [(r.name, r.group, r.version) for r in readings("deploy.apps")] == [("deploy", "apps", None)]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("jobset", ("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")),
        ("JobSets", ("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")),
        ("jobsets.jobset.x-k8s.io", ("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")),
        ("jobsets.v1alpha2.jobset.x-k8s.io", ("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")),
        ("JobSet.v1alpha2.jobset.x-k8s.io", ("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")),
        ("deploy", ("apps", "v1", "Deployment", "deployments")),
        ("Deployment", ("apps", "v1", "Deployment", "deployments")),
        ("deployments.apps", ("apps", "v1", "Deployment", "deployments")),
        ("po", ("", "v1", "Pod", "pods")),
        ("cj", ("batch", "v1", "CronJob", "cronjobs")),
        ("dgd", ("nvidia.com", "v1alpha1", "DynamoGraphDeployment", "dynamographdeployments")),
        # kubectl's priority: a built-in group wins over a CRD with the same resource name.
        ("jobs", ("batch", "v1", "Job", "jobs")),
        # No definition covers the core Service: the covered Knative Service of that name is meant (as upstream).
        ("service", ("serving.knative.dev", "v1", "Service", "services")),
        ("ksvc", ("serving.knative.dev", "v1", "Service", "services")),
    ],
)
def test_tokens_resolve_through_discovery(
    token: str, expected: tuple[str, str, str, str], discovery: DiscoveryDocument, registry: DefinitionRegistry
) -> None:
    found = resolve_type(token, discovery, registry)
    assert found.resource is not None
    assert (found.group, found.version, found.kind, found.resource.plural) == expected
    assert found.definition.origin == "catalog"


def test_a_served_version_without_an_exact_definition_uses_the_group_and_kind_fallback(
    discovery: DiscoveryDocument, registry: DefinitionRegistry
) -> None:
    found = resolve_type("dynamographdeployment", discovery, registry)  # served at v1alpha1 only
    assert found.version == "v1alpha1" and found.definition.karta.root_gvk is not None
    assert found.definition.karta.root_gvk.version == "v1alpha1"


def test_unserved_types_resolve_through_the_definitions(
    discovery: DiscoveryDocument, registry: DefinitionRegistry
) -> None:
    found = resolve_type("rayclusters", discovery, registry)
    assert (found.group, found.version, found.kind, found.resource) == ("ray.io", "v1", "RayCluster", None)
    offline = resolve_type("RayCluster.ray.io", None, registry)
    assert offline.kind == "RayCluster" and not offline.served


def test_several_definitions_of_one_kind_are_ambiguous_with_tokens_that_resolve(registry: DefinitionRegistry) -> None:
    empty = DiscoveryDocument([], {})
    with pytest.raises(AmbiguousType) as info:
        resolve_type("dynamographdeployment", empty, registry)
    assert info.value.candidates == [
        "dynamographdeployment.v1alpha1.nvidia.com",
        "dynamographdeployment.v1beta1.nvidia.com",
    ]
    for candidate in info.value.candidates:
        assert resolve_type(candidate, empty, registry).version in ("v1alpha1", "v1beta1")


def test_two_covered_groups_serving_a_name_are_ambiguous(discovery: DiscoveryDocument) -> None:
    registry = DefinitionRegistry([("catalog", builtin_definitions()), ("local", [other_jobset("v2")])])
    with pytest.raises(AmbiguousType) as info:
        resolve_type("jobset", discovery, registry)
    assert info.value.candidates == ["jobsets.jobset.x-k8s.io", "jobsets.other.io"]
    assert "retry with one of: jobsets.jobset.x-k8s.io, jobsets.other.io" in info.value.message
    found = resolve_type("jobsets.other.io", discovery, registry)
    assert (found.group, found.version) == ("other.io", "v2")  # the group's preferred version
    pinned = resolve_type("jobsets.v1.other.io", discovery, registry)
    assert pinned.version == "v1"


def test_a_token_nothing_covers(discovery: DiscoveryDocument, registry: DefinitionRegistry) -> None:
    with pytest.raises(TypeNotCovered, match='no Karta definition covers "flinkdeployment"'):
        resolve_type("flinkdeployment", discovery, registry)
    with pytest.raises(TypeNotCovered):
        resolve_type("namespaces", discovery, registry)  # served, but no definition covers it


# --- the document and its cache ---------------------------------------------------------------------------------


def test_paths_and_lookups(discovery: DiscoveryDocument) -> None:
    deployments = discovery.find("apps", "v1", "Deployment")
    assert deployments is not None
    assert deployments.collection_path("ml") == "/apis/apps/v1/namespaces/ml/deployments"
    assert deployments.collection_path(None) == "/apis/apps/v1/deployments"
    assert deployments.object_path("web", "ml") == "/apis/apps/v1/namespaces/ml/deployments/web"
    namespaces = discovery.find("", "v1", "Namespace")
    assert namespaces is not None and namespaces.collection_path("ml") == "/api/v1/namespaces"
    assert [r.version for r in discovery.versions_of("other.io", "JobSet")] == ["v2", "v1"]
    assert discovery.serving("other.io", "v3", "JobSet") == discovery.find("other.io", "v2", "JobSet")


def test_legacy_discovery_documents_give_the_same_resources() -> None:
    legacy = DiscoveryDocument.from_legacy(
        {"": ["v1"], "apps": ["v1"]},
        {
            ("", "v1"): {
                "resources": [
                    {
                        "name": "pods",
                        "singularName": "pod",
                        "kind": "Pod",
                        "namespaced": True,
                        "verbs": ["list"],
                        "shortNames": ["po"],
                    },
                    {"name": "pods/status", "kind": "Pod", "namespaced": True},
                ]
            },
            ("apps", "v1"): {
                "resources": [
                    {
                        "name": "deployments",
                        "singularName": "",
                        "kind": "Deployment",
                        "namespaced": True,
                        "shortNames": ["deploy"],
                    }
                ]
            },
        },
    )
    assert [r.plural for r in legacy.resources] == ["pods", "deployments"]
    assert legacy.by_name("deploy")[0].singular == "deployment"


def test_the_cache_round_trips_expires_and_is_per_server(discovery: DiscoveryDocument, tmp_path: Path) -> None:
    server = "https://10.0.0.1:6443"
    path = cache_file(tmp_path, server)
    assert path == tmp_path / "discovery" / "10.0.0.1_6443" / "discovery.json"
    write_cache(path, server, discovery)
    again = read_cache(path, server, ttl=600)
    assert again is not None and again.resources == discovery.resources
    assert again.group_versions == discovery.group_versions
    assert read_cache(path, "https://other:6443", ttl=600) is None  # another server's file
    old = time.time() - 601
    os.utime(path, (old, old))
    assert read_cache(path, server, ttl=600) is None  # expired
    path.write_text("{not json")
    assert read_cache(path, server, ttl=10**9) is None
