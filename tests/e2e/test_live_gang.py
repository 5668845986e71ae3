"""`wmap gang TYPE/NAME` against the real API server: the plan of a live workload, with its pods read from the
cluster, equals the plan of the same objects offline; scheduler exports work on it too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workload_map.catalog import builtin_registry
from workload_map.gang import plan
from workload_map.pods import OwnerChains
from workload_map.resolve import Workload

from .conftest import ApiServer
from .test_live_support import Wmap, fixture_objects, install_fixture, summary, wmap_requests

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

GANG_FIXTURES = [
    "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    "jobset-x-k8s-io-jobset-v1alpha2",
    "kubeflow-org-pytorchjob-v1",
    "ray-io-raycluster-v1",
]


def _offline_plan(fixture: str) -> dict[str, Any]:
    workload, owners, pods = fixture_objects(fixture)
    resolved = builtin_registry().for_object(workload)
    assert resolved is not None
    chains = OwnerChains(owners, pods=pods)
    owned = [pod for pod in pods if chains.owned_by(pod, workload["metadata"]["uid"])]
    owned.sort(key=lambda pod: pod["metadata"]["name"])  # the order a LIST returns them in
    return plan(Workload(resolved.karta, workload).resolve(), owned).to_dict()


@pytest.mark.parametrize("fixture", GANG_FIXTURES)
def test_live_gang_plan_equals_the_offline_plan(
    fixture: str, api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    namespace = make_namespace("wmap-live-gang")
    stored = install_fixture(api_server, fixture, namespace)
    mark = api_server.audit_mark()
    result = wmap.run(
        "gang", f"{stored['kind'].lower()}/{stored['metadata']['name']}", "-o", "json", namespace=namespace
    )
    assert result.code == 0, result.stderr
    live = json.loads(result.stdout)
    offline = _offline_plan(fixture)
    assert live["gangs"] == offline["gangs"]
    assert live["workload"]["uid"] == stored["metadata"]["uid"] and live["workload"]["namespace"] == namespace
    calls = summary(wmap_requests(api_server, mark))
    assert calls.count(("list", "pods")) == 1
    assert not [c for c in calls if c == ("get", "pods")]


def test_live_gang_exports_for_a_scheduler(api_server: ApiServer, wmap: Wmap, make_namespace: Any) -> None:
    namespace = make_namespace("wmap-live-gang")
    stored = install_fixture(api_server, "leaderworkerset-x-k8s-io-leaderworkerset-v1", namespace)
    result = wmap.installed(
        "gang",
        f"leaderworkerset/{stored['metadata']['name']}",
        "--format",
        "kai",
        "--queue",
        "research",
        namespace=namespace,
    )
    assert result.code == 0, result.stderr
    documents = [doc for doc in result.stdout.split("---\n") if doc.strip()]
    assert len(documents) == 2 and all("kind: PodGroup" in doc and "queue: research" in doc for doc in documents)


def test_live_gang_errors(wmap: Wmap, namespace: str) -> None:
    missing = wmap.run("gang", "jobset/absent", namespace=namespace)
    assert missing.code == 3
    assert missing.stderr == f'error: JobSet "absent" not found in namespace {namespace}\n'
    with_pods = wmap.run("gang", "jobset/x", "--pods", "pods.yaml", namespace=namespace)
    assert with_pods.code == 2 and "--pods is for -f" in with_pods.stderr
