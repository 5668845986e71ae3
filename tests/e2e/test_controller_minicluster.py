"""The pod grouper (workload-map-controller, docs/controller.md) on a Flux Operator MiniCluster.

The broker pods are owned by the indexed Job the operator makes, the Job by the MiniCluster: the Job is an owner on
the pods' chains, not a workload of its own, so the grouper plans the MiniCluster (as KAI takes it as the top owner)
and writes one KAI PodGroup owned by it, links every pending broker to it and marks the MiniCluster with KAI's skip
annotation. The objects are the catalog fixture's (tests/fixtures/catalog/flux-framework-org-minicluster-v1alpha2/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from .conftest import ApiServer, expect
from .test_controller import (  # the controller harness: a controller process per test, polled until it converges
    Controller,
    _install_unscheduled_jobset,
    _pod_groups,
    eventually,
    start_controller,
)
from .test_live_support import served_kinds

__all__ = ["start_controller"]  # a fixture of test_controller's, used here

pytestmark = [pytest.mark.e2e]

FIXTURE = "flux-framework-org-minicluster-v1alpha2"


def test_kai_pod_group_of_a_minicluster_is_the_broker_quorum_owned_by_the_minicluster(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    if ("flux-framework.org/v1alpha2", "MiniCluster") not in served_kinds(api_server):
        pytest.skip("the test server does not serve flux-framework.org/v1alpha2 MiniCluster")
    namespace = make_namespace("wmap-ctrl-flux")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", "kai", "--namespaces", namespace
    )
    minicluster, pod_names = _install_unscheduled_jobset(
        api_server, namespace, scheduler_name="kai-scheduler", fixture=FIXTURE
    )
    groups = eventually(lambda: _pod_groups(kube, namespace), "a KAI PodGroup", [controller])
    (group,) = groups  # one, for the MiniCluster: none for its Job
    assert group["metadata"]["name"] == "lammps"
    assert group["spec"]["minMember"] == 4
    assert group["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "flux-framework.org/v1alpha2",
            "kind": "MiniCluster",
            "name": "lammps",
            "uid": minicluster["metadata"]["uid"],
            "controller": True,
        }
    ]

    def linked() -> list[dict[str, Any]] | None:
        pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
        done = [p for p in pods if (p["metadata"].get("annotations") or {}).get("pod-group-name") == "lammps"]
        return pods if len(done) == len(pod_names) == 4 else None

    pods = eventually(linked, "every broker linked to the MiniCluster's PodGroup", [controller])
    assert all(p["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"] == "true" for p in pods)
    path = f"/apis/flux-framework.org/v1alpha2/namespaces/{namespace}/miniclusters/lammps"
    stored = eventually(
        lambda: (expect(kube.get(path))["metadata"].get("annotations") or {}).get("kai.scheduler/skip-podgrouper"),
        "KAI's skip annotation on the MiniCluster",
        [controller],
    )
    assert stored == "true"
