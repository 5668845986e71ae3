"""A Flux Operator MiniCluster read from a real API server: the phase follows the Job the operator made.

The MiniCluster CRD is the operator's published one (tests/e2e/crds/miniclusters.flux-framework.org.yaml), the
objects the catalog fixture's (tests/fixtures/catalog/flux-framework-org-minicluster-v1alpha2/, and its services
variant): the MiniCluster, its indexed Job and the Job's pods, created with the owner references the operator and
the Job controller write. `wmap describe` and `wmap gang` GET the Job (the definition's `job` reference) and read
its status; `wmap get` reads the MiniCluster alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ApiServer
from .test_live_support import (
    Wmap,
    fixture_objects,
    get_object,
    install_fixture,
    patch_status,
    served_kinds,
    summary,
    wmap_requests,
)

pytestmark = [pytest.mark.e2e]

FIXTURE = "flux-framework-org-minicluster-v1alpha2"
SERVICES = f"{FIXTURE}/variants/services"


@pytest.fixture
def minicluster(api_server: ApiServer, make_namespace: Any) -> dict[str, Any]:
    if ("flux-framework.org/v1alpha2", "MiniCluster") not in served_kinds(api_server):
        pytest.skip("the test server does not serve flux-framework.org/v1alpha2 MiniCluster")
    namespace = make_namespace("wmap-flux")
    stored = install_fixture(api_server, FIXTURE, namespace)
    _, (job,), _ = fixture_objects(FIXTURE)
    job = get_object(api_server, {**job, "metadata": {**job["metadata"], "namespace": namespace}})
    return {"namespace": namespace, "minicluster": stored, "job": job}


def test_describe_reads_the_brokers_through_the_job_and_gets_the_job_once(
    api_server: ApiServer, wmap: Wmap, minicluster: dict[str, Any]
) -> None:
    namespace = minicluster["namespace"]
    mark = api_server.audit_mark()
    view = wmap.json("describe", "minicluster/lammps", namespace=namespace)
    calls = summary(wmap_requests(api_server, mark))
    assert calls.count(("get", "jobs")) == 1, calls  # the reference
    assert view["phases"] == ["Running"]
    (broker,) = view["components"]
    assert broker["name"] == "broker"
    assert broker["replicas"]["desired"] == broker["replicas"]["ready"] == 4
    assert sorted(pod["replica"] for pod in broker["pods"]) == ["0", "1", "2", "3"]
    assert view["resources"]["gpus"] == 4


@pytest.mark.parametrize(
    ("status", "phase", "reason"),
    [
        (
            {"active": 0, "ready": 0, "succeeded": 4, "completionTime": "2026-09-14T09:10:00Z", "conditions": []},
            "Completed",
            "Complete=True (CompletionsReached)",
        ),
        ({"active": 0, "ready": 0, "failed": 4, "conditions": []}, "Failed", "Failed=True (DeadlineExceeded)"),
        ({"active": 4, "ready": 0}, "Initializing", "JobMiniClusterReady=True"),
    ],
    ids=["completed", "deadline", "pending"],
)
def test_the_phase_is_the_jobs_end_or_its_pending_brokers(
    api_server: ApiServer, wmap: Wmap, minicluster: dict[str, Any], status: dict[str, Any], phase: str, reason: str
) -> None:
    if phase == "Completed":
        status["conditions"] = [
            _condition("SuccessCriteriaMet", "CompletionsReached"),
            _condition("Complete", "CompletionsReached"),
        ]
    elif phase == "Failed":
        status["conditions"] = [
            _condition("FailureTarget", "DeadlineExceeded"),
            _condition("Failed", "DeadlineExceeded"),
        ]
    patch_status(api_server, minicluster["job"], status)
    view = wmap.json("describe", "minicluster/lammps", namespace=minicluster["namespace"])
    assert view["phase"] == phase
    assert view["reason"].startswith(reason), view["reason"]


def test_get_reads_the_minicluster_alone(api_server: ApiServer, wmap: Wmap, minicluster: dict[str, Any]) -> None:
    patch_status(api_server, minicluster["job"], {"active": 0, "ready": 0, "failed": 4, "conditions": []})
    mark = api_server.audit_mark()
    result = wmap.run("get", "minicluster", "-o", "wide", namespace=minicluster["namespace"])
    assert result.code == 0, result.output
    assert ("get", "jobs") not in summary(wmap_requests(api_server, mark))
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("lammps")]
    assert "Running" in row.split()


def test_the_gang_of_the_services_variant_holds_the_brokers_and_the_services_pod(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    if ("flux-framework.org/v1alpha2", "MiniCluster") not in served_kinds(api_server):
        pytest.skip("the test server does not serve flux-framework.org/v1alpha2 MiniCluster")
    namespace = make_namespace("wmap-flux")
    install_fixture(api_server, SERVICES, namespace)
    gang_plan = wmap.json("gang", "minicluster/registry-lammps", namespace=namespace)
    (gang,) = gang_plan["gangs"]
    assert (gang["minMember"], gang["count"]) == (5, 5)
    assert {role["name"]: role["minCount"] for role in gang["roles"]} == {"broker": 4, "services-services": 1}
    assert sorted(pod["name"] for pod in gang_plan["pods"] if pod.get("gang") == gang["name"]) == [
        "registry-lammps-0-x7k2p",
        "registry-lammps-1-m4q9d",
        "registry-lammps-2-c8v3n",
        "registry-lammps-3-h2w6t",
        "registry-lammps-services",
    ]


def _condition(kind: str, reason: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": reason,
        "lastProbeTime": "2026-09-14T09:10:00Z",
        "lastTransitionTime": "2026-09-14T09:10:00Z",
    }
