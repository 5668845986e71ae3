"""`wmap suspend` / `wmap resume` against the real API server: the object really changes (one merge patch),
already-suspended is a no-op, dry runs send nothing (client) or store nothing (server), and a type without suspend
support or a refused patch is a clear error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workload_map.catalog import builtin_registry
from workload_map.resolve import Workload

from .conftest import ApiServer
from .test_live_support import (
    Wmap,
    create,
    deployment_body,
    get_object,
    grant,
    jobset_body,
    read_rules,
    summary,
    wmap_requests,
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API


@pytest.fixture
def jobset(api_server: ApiServer, namespace: str) -> dict[str, Any]:
    return create(api_server, jobset_body("train"), namespace=namespace)


def patches(api_server: ApiServer, mark: int) -> list[dict[str, Any]]:
    return [e for e in wmap_requests(api_server, mark) if e["verb"] == "patch"]


def test_suspend_then_resume_changes_the_object(
    api_server: ApiServer, wmap: Wmap, jobset: dict[str, Any], namespace: str
) -> None:
    assert not jobset["spec"].get("suspend")
    mark = api_server.audit_mark()
    result = wmap.run("suspend", "jobset/train", namespace=namespace)
    assert result.code == 0, result.stderr
    assert result.stdout == "JobSet/train suspended\n"
    stored = get_object(api_server, jobset)
    assert stored["spec"]["suspend"] is True
    calls = summary(wmap_requests(api_server, mark))
    assert sorted(c for c in calls if c[1] not in ("/api", "/apis")) == sorted(
        [("list", "kartas"), ("get", "jobsets"), ("patch", "jobsets")]
    )

    mark = api_server.audit_mark()
    again = wmap.run("suspend", "jobsets", "train", namespace=namespace)
    assert again.code == 0 and again.stdout == ""
    assert again.stderr.startswith("JobSet/train is already suspended")
    assert patches(api_server, mark) == []

    resumed = wmap.installed("resume", "jobset/train", namespace=namespace)
    assert resumed.code == 0, resumed.stderr
    assert resumed.stdout == "JobSet/train resumed\n"
    assert get_object(api_server, jobset)["spec"]["suspend"] is False


def test_dry_run_prints_the_patch_and_sends_nothing(
    api_server: ApiServer, wmap: Wmap, jobset: dict[str, Any], namespace: str
) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("suspend", "--dry-run", "jobset/train", namespace=namespace)
    assert result.code == 0, result.stderr
    patch = json.loads(result.stdout)
    assert patch["spec"] == {"suspend": True}
    assert patch["metadata"]["resourceVersion"] == jobset["metadata"]["resourceVersion"]
    assert "dry run: nothing was sent" in result.stderr
    assert patches(api_server, mark) == []
    assert not get_object(api_server, jobset)["spec"].get("suspend")


def test_server_dry_run_is_validated_and_not_stored(
    api_server: ApiServer, wmap: Wmap, jobset: dict[str, Any], namespace: str
) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("suspend", "jobset/train", "--dry-run=server", namespace=namespace)
    assert result.code == 0, result.stderr
    assert result.stdout == "JobSet/train suspended (server dry run: nothing was stored)\n"
    (patch,) = patches(api_server, mark)
    assert "dryRun=All" in patch["requestURI"]
    assert not get_object(api_server, jobset)["spec"].get("suspend")


def test_the_definition_decides_what_suspend_writes(api_server: ApiServer, wmap: Wmap, namespace: str) -> None:
    job = create(
        api_server,
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "ddp"},
            "spec": {
                "pytorchReplicaSpecs": {
                    "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "t"}]}}}
                }
            },
        },
        namespace=namespace,
    )
    result = wmap.run("suspend", "pytorchjob/ddp", namespace=namespace)
    assert result.code == 0, result.stderr
    stored = get_object(api_server, job)
    karta = builtin_registry().for_object(stored)
    assert karta is not None
    check = Workload(karta.karta, stored)
    check.suspend()
    assert check.merge_patch() == {}  # the stored object already carries every suspend setting
    assert stored != job


def test_a_type_without_suspend_support_is_exit_1(api_server: ApiServer, wmap: Wmap, namespace: str) -> None:
    create(api_server, deployment_body("web", replicas=1), namespace=namespace)
    result = wmap.run("suspend", "deployment/web", namespace=namespace)
    assert result.code == 1
    assert result.stderr.splitlines()[0] == (
        "error: Deployment has no suspend support in its definition 'apps-deployment-v1'"
    )


def test_a_missing_workload_is_exit_3(wmap: Wmap, namespace: str) -> None:
    result = wmap.run("resume", "jobset/absent", namespace=namespace)
    assert result.code == 3
    assert result.stderr == f'error: JobSet "absent" not found in namespace {namespace}\n'


def test_a_refused_patch_names_the_permission(
    api_server: ApiServer, wmap: Wmap, jobset: dict[str, Any], namespace: str
) -> None:
    grant(api_server, namespace, read_rules(("jobset.x-k8s.io", "jobsets")))
    assert api_server.restricted_kubeconfig is not None
    result = wmap.run("suspend", "jobset/train", namespace=namespace, kubeconfig=api_server.restricted_kubeconfig)
    assert result.code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: not allowed to patch jobsets.jobset.x-k8s.io train in namespace {namespace} (as user wmap-restricted)"
    ]
    assert not get_object(api_server, jobset)["spec"].get("suspend")
